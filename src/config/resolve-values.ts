import { CMD_PLACEHOLDER } from './placeholders.js';
import { runShellCommand, type CommandResult } from './run-command.js';
import type { ServerConfig, ServerSource } from './types.js';
import { resolveTransportKind } from './validate.js';

/** The part of a pino logger we use; warnings carry the server and key, never a value. */
export interface ResolverLogger {
  warn(obj: object, msg: string): void;
}

/** Stored credentials (SPEC §9); only the hook lives here, the store is elsewhere. */
export interface CredentialsHook {
  injectCredentials?(name: string): string | undefined | Promise<string | undefined>;
}

export interface ValueResolverOptions {
  /** Run `!cmd` values that come from project-level files. @default false */
  trustProjectCommands?: boolean;
  logger?: ResolverLogger;
  /** Deadline of one `!cmd`. @default 10000 */
  commandTimeoutMs?: number;
  credentials?: CredentialsHook;
  /** Environment of the `!cmd` shells. @default process.env */
  env?: NodeJS.ProcessEnv;
}

export interface ResolvedServerConfig {
  /** A copy with every `!cmd` replaced (or its entry dropped) and credentials injected. */
  config: ServerConfig;
  /** Entries that were dropped, as `env.NAME` / `headers.Name`. */
  dropped: string[];
  /** Say which server and key, never the value, the command or its output. */
  warnings: string[];
}

export interface ValueResolver {
  resolve(name: string, config: ServerConfig, source: ServerSource): Promise<ResolvedServerConfig>;
}

type Outcome = { key: string; value: string } | { key: string; dropped: string };

/**
 * Resolves `!cmd` values of `env`, `headers` and `oauth.clientSecret` / `oauth.privateKeyJwt`
 * just before connecting (SPEC §3). Successful
 * results are cached for the resolver's life and identical commands in flight share one run;
 * failures are not cached, so a reload retries a secret tool that was locked.
 */
export function createValueResolver(options: ValueResolverOptions = {}): ValueResolver {
  const timeoutMs = options.commandTimeoutMs ?? 10_000;
  const runs = new Map<string, Promise<CommandResult>>();

  const run = (command: string): Promise<CommandResult> => {
    let pending = runs.get(command);
    if (!pending) {
      pending = runShellCommand(command, { timeoutMs, ...(options.env ? { env: options.env } : {}) });
      runs.set(command, pending);
      void pending.then((result) => {
        if (!result.ok) runs.delete(command);
      });
    }
    return pending;
  };

  /**
   * `!cmd` (the whole value is a command) or `${cmd: …}` (mcp-hub's form, anywhere in the
   * value, as often as needed): same runner, same trust rule, same "drop the entry" on failure.
   */
  const resolveValue = async (field: 'env' | 'headers' | 'oauth', key: string, value: string, source: ServerSource): Promise<Outcome> => {
    const label = `${field}.${key}`;
    const whole = value.startsWith('!');
    const embedded = whole ? [] : [...value.matchAll(CMD_PLACEHOLDER)];
    if (!whole && embedded.length === 0) return { key, value };
    if (source.level === 'project' && !options.trustProjectCommands) {
      return { key, dropped: `"${label}" not resolved: commands from project-level files need trustProjectCommands` };
    }
    const commands = whole ? [value.slice(1).trim()] : embedded.map((m) => (m[1] ?? '').trim());
    if (commands.some((command) => command === '')) return { key, dropped: `"${label}" dropped: empty command` };
    const results = await Promise.all(commands.map(run));
    const failed = results.find((result) => !result.ok);
    if (failed && !failed.ok) return { key, dropped: `"${label}" dropped: command ${failed.reason}` };
    const outputs = results.map((result) => (result.ok ? result.stdout : ''));
    if (whole) return { key, value: outputs[0] ?? '' };
    let i = 0;
    return { key, value: value.replace(CMD_PLACEHOLDER, () => outputs[i++] ?? '') };
  };

  return {
    async resolve(name, config, source) {
      const copy = structuredClone(config);
      const dropped: string[] = [];
      const warnings: string[] = [];
      const warn = (message: string, key?: string): void => {
        warnings.push(`server "${name}": ${message}`);
        options.logger?.warn({ server: name, ...(key ? { key } : {}) }, message);
      };

      for (const field of ['env', 'headers'] as const) {
        const table = copy[field];
        if (!table) continue;
        const outcomes = await Promise.all(Object.entries(table).map(([key, value]) => resolveValue(field, key, value, source)));
        const next: Record<string, string> = {};
        for (const outcome of outcomes) {
          if ('value' in outcome) {
            next[outcome.key] = outcome.value;
          } else {
            dropped.push(`${field}.${outcome.key}`);
            warn(outcome.dropped, `${field}.${outcome.key}`);
          }
        }
        copy[field] = next;
      }

      // The unattended sign-in's secret or private key (issue #29) comes from a secret tool as often as a header.
      if (copy.oauth) {
        for (const key of ['clientSecret', 'privateKeyJwt', 'assertion'] as const) {
          const value = copy.oauth[key];
          if (value === undefined) continue;
          const outcome = await resolveValue('oauth', key, value, source);
          if ('value' in outcome) {
            copy.oauth[key] = outcome.value;
          } else {
            delete copy.oauth[key];
            dropped.push(`oauth.${key}`);
            warn(outcome.dropped, `oauth.${key}`);
          }
        }
      }

      await injectCredentials(name, copy, options.credentials, warn);
      return { config: copy, dropped, warnings };
    },
  };
}

/**
 * Adds a stored token as `Authorization: Bearer …` (http/sse) or `OAUTH_ACCESS_TOKEN` (stdio),
 * unless the config already sets one: what the operator wrote wins over what was stored.
 */
async function injectCredentials(name: string, config: ServerConfig, hook: CredentialsHook | undefined, warn: (message: string) => void): Promise<void> {
  if (!hook?.injectCredentials) return;
  let token: string | undefined;
  try {
    token = await hook.injectCredentials(name);
  } catch {
    // The store's error could quote what it holds; the name of the server is enough here.
    warn('credentials lookup failed; connecting without stored credentials');
    return;
  }
  if (!token) return;
  const kind = resolveTransportKind(config);
  if (kind === 'stdio') {
    config.env ??= {};
    config.env.OAUTH_ACCESS_TOKEN ??= token;
  } else if (kind === 'http' || kind === 'sse') {
    const headers = (config.headers ??= {});
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'authorization')) {
      headers.Authorization = `Bearer ${token}`;
    }
  }
}
