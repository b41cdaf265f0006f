import type { EntryReader } from './entry-reader.js';
import type { ServerConfig, ServerOAuthConfig } from './types.js';

/**
 * Each tool spells a server entry a little differently. A dialect maps one raw entry onto our
 * `ServerConfig`; type errors land in the reader, unknown keys are reported by the caller.
 */
export type Dialect = (r: EntryReader, vars: Readonly<Record<string, string | undefined>>) => ServerConfig;

/** Spellings of Streamable HTTP seen in the wild (Cursor writes "streamableHttp"). */
const TYPE_ALIASES: Readonly<Record<string, string>> = {
  streamableHttp: 'http',
  'streamable-http': 'http',
  streamable_http: 'http',
  streamablehttp: 'http',
};

function normaliseType(type: string | undefined): string | undefined {
  return type === undefined ? undefined : (TYPE_ALIASES[type] ?? type);
}

/** `{command, args, env, cwd, url, type, headers}` shared by the `mcpServers` family. */
function common(r: EntryReader): ServerConfig {
  return dropUndefined({
    type: normaliseType(r.string('type')),
    command: r.string('command'),
    args: r.stringArray('args'),
    env: r.stringRecord('env'),
    cwd: r.string('cwd'),
    url: r.string('url'),
    headers: r.stringRecord('headers'),
  });
}

/**
 * Claude Code, Claude Desktop, Cursor, project `.mcp.json` and our own `timeout` fields.
 * `disabled: true` is how Cursor and Windsurf switch an entry off.
 */
export const standardDialect: Dialect = (r) => {
  const cfg = common(r);
  const enabled = r.enabledFlag('enabled');
  const disabled = r.boolean('disabled');
  return dropUndefined({
    ...cfg,
    enabled: enabled ?? (disabled === true ? false : undefined),
    timeout: r.duration('timeout'),
    callTimeout: r.duration('callTimeout'),
  });
};

/** Windsurf names the remote endpoint `serverUrl`, and hides tools with `disabledTools`. */
export const windsurfDialect: Dialect = (r, vars) => {
  const cfg = dropUndefined({ ...standardDialect(r, vars), excludeTools: r.stringArray('disabledTools') });
  const serverUrl = r.string('serverUrl');
  return serverUrl !== undefined && cfg.url === undefined ? { ...cfg, url: serverUrl } : cfg;
};

/** VS Code `servers`: `type` is always written; `dev` and `envFile` are editor features. */
export const vscodeDialect: Dialect = (r) => {
  r.ignore('dev');
  return common(r);
};

/**
 * Gemini CLI: `url` is legacy SSE, `httpUrl` is Streamable HTTP (and wins when both are set,
 * as in Gemini itself). Gemini's `timeout` is its per-request timeout in ms, so it bounds tool
 * calls (our `callTimeout`), not the connect. `includeTools` / `excludeTools` hide tools, as in
 * Gemini; its `oauth` block carries over (see geminiOAuth); trust is Gemini's own confirmation
 * policy and means nothing here.
 */
export const geminiDialect: Dialect = (r) => {
  const cfg = dropUndefined({
    ...common(r),
    callTimeout: r.duration('timeout'),
    includeTools: r.stringArray('includeTools'),
    excludeTools: r.stringArray('excludeTools'),
    oauth: geminiOAuth(r),
  });
  r.ignore('trust', 'description', 'authProviderType');
  r.ignore('targetAudience', 'targetServiceAccount', 'extensionName');
  const httpUrl = r.string('httpUrl');
  if (httpUrl !== undefined) return { ...cfg, url: httpUrl, type: cfg.type ?? 'http' };
  if (cfg.url !== undefined) return { ...cfg, type: cfg.type ?? 'sse' };
  return cfg;
};

/**
 * Gemini's `oauth` block: `clientId`, `clientSecret` and `scopes` carry over. Its endpoint URLs
 * (`authorizationUrl`, `tokenUrl`, `registrationUrl`), `redirectUri` and `audiences` do not:
 * Switchboard discovers the endpoints from the server and owns its redirect.
 */
function geminiOAuth(r: EntryReader): ServerOAuthConfig | undefined {
  const block = r.object('oauth');
  if (!block) return undefined;
  return oauthOf(r, 'oauth', { clientId: block.clientId, clientSecret: block.clientSecret, scopes: block.scopes });
}

/** Checks the types of a mapped OAuth block; undefined when it carries nothing we use. */
function oauthOf(r: EntryReader, where: string, raw: { clientId?: unknown; clientSecret?: unknown; scopes?: unknown }): ServerOAuthConfig | undefined {
  const out: ServerOAuthConfig = {};
  for (const field of ['clientId', 'clientSecret'] as const) {
    const value = raw[field];
    if (typeof value === 'string' && value !== '') out[field] = value;
    else if (value !== undefined) r.errors.push(`"${where}" ${field} must be a string`);
  }
  if (Array.isArray(raw.scopes) && raw.scopes.every((scope) => typeof scope === 'string')) out.scopes = [...(raw.scopes as string[])];
  else if (raw.scopes !== undefined) r.errors.push(`"${where}" scopes must be an array of strings`);
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * Codex `[mcp_servers.<name>]` (TOML, snake_case). `url` means Streamable HTTP. Secrets are
 * referenced by variable name, so they become `${VAR}` placeholders that discovery expands.
 * `startup_timeout_sec` bounds the connect (our `timeout`), `tool_timeout_sec` a call
 * (`callTimeout`); `enabled_tools` / `disabled_tools` are the tool filters.
 */
export const codexDialect: Dialect = (r, vars) => {
  r.ignore('required');
  // `scopes` (what `codex mcp login` asks for) and `[mcp_servers.<name>.oauth] client_id`; its
  // `callback_url` is Codex's own redirect, not ours.
  const oauthTable = r.object('oauth');
  const oauth = oauthOf(r, 'oauth', { clientId: oauthTable?.client_id, clientSecret: oauthTable?.client_secret, scopes: r.stringArray('scopes') });
  const headers: Record<string, string> = { ...r.stringRecord('http_headers') };
  for (const [header, variable] of Object.entries(r.stringRecord('env_http_headers') ?? {})) {
    headers[header] = `\${${variable}}`;
  }
  const bearerVar = r.string('bearer_token_env_var');
  if (bearerVar !== undefined) headers.Authorization = `Bearer \${${bearerVar}}`;

  const env: Record<string, string> = { ...r.stringRecord('env') };
  // `env_vars` forwards variables of the parent; only the ones that are set, as Codex does.
  for (const variable of r.stringArray('env_vars') ?? []) {
    if (env[variable] === undefined && vars[variable] !== undefined) env[variable] = `\${${variable}}`;
  }
  const startupMs = r.duration('startup_timeout_ms');
  const startupSec = r.duration('startup_timeout_sec', 1000);
  return dropUndefined({
    command: r.string('command'),
    args: r.stringArray('args'),
    env: Object.keys(env).length > 0 ? env : undefined,
    cwd: r.string('cwd'),
    url: r.string('url'),
    headers: Object.keys(headers).length > 0 ? headers : undefined,
    enabled: r.boolean('enabled'),
    timeout: startupMs ?? startupSec,
    callTimeout: r.duration('tool_timeout_sec', 1000),
    includeTools: r.stringArray('enabled_tools'),
    excludeTools: r.stringArray('disabled_tools'),
    oauth,
  });
};

function dropUndefined<T extends object>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}
