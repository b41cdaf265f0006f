import { dirname, join, resolve } from 'node:path';
import { SwitchboardError } from '../errors.js';
import { checkDaemonFile } from './daemon-file.js';
import { isPlainObject } from './expand-vars.js';
import { issueText, type ConfigIssue } from './issues.js';
import { preparePolicyLanguage } from './policy-cel.js';
import { readConfigFile } from './read-config-file.js';
import { defaultDbPath } from './state-path.js';
import type { AgentConfig } from './agent-schema.js';
import type { DaemonConfig } from './schema.js';
import type { NativeServerConfig } from './server-schema.js';

export { defaultDbPath };

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The validated config, deep-frozen at runtime, with `dbPath` resolved to an absolute path. The
 * type stays `DaemonConfig` (shallow `Readonly`) so it passes straight to `createDaemon`.
 */
export type LoadedDaemonConfig = DaemonConfig & {
  readonly dbPath: string;
  /** Problems that left something out but let the rest apply (an invalid agent entry), one line each. */
  readonly warnings: readonly string[];
  /**
   * Server entries left out of `mcpServers` because they are invalid, one line each. Not a
   * warning to log here: discovery reads the same file and reports each one exactly as it does
   * on a live edit (SPEC §3), so a start and a reload treat a typo alike.
   */
  readonly serverIssues: readonly string[];
};

export interface LoadDaemonConfigOptions {
  /** Explicit file (`--config`), relative to `cwd`; a missing explicit file is an error. */
  path?: string;
  env: Env;
  home: string;
  /** Base for a relative `path`. @default process.cwd() */
  cwd?: string;
}

/** Variables that override the file, with the field each sets. */
const ENV_OVERRIDES = {
  SWITCHBOARD_TOKEN: 'token',
  SWITCHBOARD_HOST: 'host',
  SWITCHBOARD_PORT: 'port',
  // Like the others, the environment wins over the file: a deployment (Helm Secret, compose)
  // sets the database without editing the config it ships.
  SWITCHBOARD_DATABASE_URL: 'store',
} as const;

/** `--config`, else `$SWITCHBOARD_CONFIG`, else `~/.config/switchboard/config.json`. */
export function resolveConfigPath(opts: LoadDaemonConfigOptions): { path: string; explicit: boolean } {
  const cwd = opts.cwd ?? process.cwd();
  const chosen = opts.path || opts.env.SWITCHBOARD_CONFIG;
  if (chosen) return { path: resolve(cwd, chosen), explicit: true };
  return { path: join(opts.home, '.config', 'switchboard', 'config.json'), explicit: false };
}

/**
 * Reads Switchboard's own file, applies the `SWITCHBOARD_*` overrides, validates once and
 * freezes. A missing default file gives the defaults; a missing explicit file, bad JSON or an
 * invalid daemon-level field throws `CONFIG_INVALID` naming the file and every bad field's path.
 * An invalid server entry does not: it is left out (`serverIssues`), as a live reload leaves it
 * out, and the other servers start.
 */
export async function loadDaemonConfig(opts: LoadDaemonConfigOptions): Promise<LoadedDaemonConfig> {
  const { path, explicit } = resolveConfigPath(opts);
  const read = await readConfigFile(path, 'jsonc');
  if (read.kind === 'error') throw new SwitchboardError('CONFIG_INVALID', read.warning.message);
  if (read.kind === 'missing') {
    if (explicit) throw new SwitchboardError('CONFIG_INVALID', `${path}: config file not found`);
    return parseDaemonConfig({}, { path, env: opts.env, home: opts.home });
  }
  await preparePolicyLanguage(read.value);
  return parseDaemonConfig(read.value ?? {}, { path, env: opts.env, home: opts.home });
}

/** Validation half of `loadDaemonConfig`, for a document already parsed. */
export function parseDaemonConfig(raw: unknown, ctx: { path: string; env: Env; home: string }): LoadedDaemonConfig {
  const fail = (issues: string[]): never => {
    throw new SwitchboardError('CONFIG_INVALID', `${ctx.path}: ${issues.join('; ')}`);
  };
  if (!isPlainObject(raw)) return fail(['(root): expected an object']);

  const withEnv: Record<string, unknown> = { ...raw };
  const fromEnv = new Map<string, string>();
  for (const [variable, field] of Object.entries(ENV_OVERRIDES)) {
    const value = ctx.env[variable];
    // An empty variable is treated as unset, as shells make "export X=" easy to leave behind.
    if (!value) continue;
    withEnv[field] = field === 'port' && /^\d+$/.test(value) ? Number(value) : value;
    fromEnv.set(field, variable);
  }

  const checked = checkDaemonFile(withEnv, ctx.env);
  const issues = checked.settingsIssues.map((issue) => issueText(nameEnvSource(issue, fromEnv)));
  if (issues.length > 0 || !checked.settings) return fail(issues);

  const mcpServers: Record<string, NativeServerConfig> = {};
  const serverIssues: string[] = [];
  for (const server of checked.servers) {
    if (server.config) mcpServers[server.name] = server.config;
    else serverIssues.push(`${ctx.path}: server "${server.name}" ignored: ${server.issues.map((issue) => issueText(issue, `mcpServers.${server.name}`)).join('; ')}`);
  }
  // An invalid agent is left out, like an invalid server entry in discovery: the others still apply.
  const agents: Record<string, AgentConfig> = {};
  const warnings: string[] = [];
  for (const agent of checked.agents) {
    if (agent.config) agents[agent.name] = agent.config;
    else warnings.push(`${ctx.path}: agent "${agent.name}" ignored: ${agent.issues.map((issue) => issueText(issue, `agents.${agent.name}`)).join('; ')}`);
  }
  const { dbPath, ...settings } = checked.settings;
  return deepFreeze({
    ...settings,
    mcpServers,
    agents,
    warnings,
    serverIssues,
    // A relative dbPath is read against the config file, not the daemon's working directory,
    // so the same file means the same database wherever the daemon is started.
    dbPath: dbPath ? resolve(dirname(ctx.path), expandHome(dbPath, ctx.home)) : defaultDbPath(ctx.home, ctx.env),
  });
}

/** `port` → `port (from SWITCHBOARD_PORT)` when the environment supplied the bad value. */
function nameEnvSource(issue: ConfigIssue, fromEnv: ReadonlyMap<string, string>): ConfigIssue {
  const variable = fromEnv.get(issue.path);
  return variable ? { ...issue, path: `${issue.path} (from ${variable})` } : issue;
}

function expandHome(p: string, home: string): string {
  return p === '~' || p.startsWith('~/') ? join(home, p.slice(1)) : p;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
