import type { PolicyRule } from './policy-schema.js';
import type { CLIENT_ASSERTION_ALGS } from './schema.js';
import type { SandboxSettings } from './sandbox-schema.js';
/**
 * Shapes shared by discovery, validation and the runtime. A `ServerConfig` is what any provider
 * produces after normalising its own file format; it is deliberately loose (`type` is any string)
 * because `validateServerConfig` reports the problems instead of a parser rejecting the file.
 */
export interface ServerConfig {
  type?: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  enabled?: boolean | string;
  /** Connect + list deadline in ms; 0 disables. @default 30000 */
  timeout?: number;
  /** Tool-call deadline in ms, reset by progress; 0 disables. @default 60000 */
  callTimeout?: number;
  /** Time between health pings in ms; 0 disables them. @default the daemon's `health.pingIntervalMs` */
  pingIntervalMs?: number;
  /** How long a ping may take, in ms, before the server counts as frozen. @default the daemon's `health.pingTimeoutMs` */
  pingTimeoutMs?: number;
  /**
   * What the server's tool and prompt names are prefixed with; `""` exposes the original names
   * (collisions are still resolved and reported). @default `mcp_<server>_`
   */
  toolPrefix?: string;
  /** Protocol era: probe once (`auto`), or only the 2025 (`legacy`) or 2026-07-28 (`modern`) one. @default the daemon's `protocol` */
  protocol?: 'auto' | 'legacy' | 'modern';
  /**
   * With `protocol` `auto` and a Streamable HTTP server spoken to in 2026-07-28: whether a 2025-era
   * agent's `tools/call` and `prompts/get` go through a second, 2025-era connection to the same
   * URL, so the server can ask that agent (sampling, elicitation, roots) as it asks 2025 clients
   * (see mcp/upstream/era-companion.ts). @default true
   */
  eraCompanion?: boolean;
  /** Only these tools (original names) are exposed. @default every tool */
  includeTools?: string[];
  /** These tools (original names) are hidden; wins over `includeTools`. @default none */
  excludeTools?: string[];
  /** OAuth sign-in settings of an http/sse server; see `OAuthSettingsSchema`. */
  oauth?: ServerOAuthConfig;
  /**
   * Globs over the server's own tool names (as it lists them, before any prefix): a call to a
   * matching tool waits for an operator's approval (issue #22). @default none
   */
  requireApproval?: string[];
  /** Tools the gateway runs as tasks (issue #41): globs over the server's own tool names, and the mode. @default none */
  tasks?: { tools: string[]; mode?: 'optional' | 'required' | undefined };
  /** How long such a call waits for a decision, in ms. @default the daemon's `approvalTimeoutMs` (120000) */
  approvalTimeoutMs?: number;
  /** Hold a served tool whose definition changed until approved (`changes`), or not (`off`). @default the daemon's `pinTools` */
  pinTools?: 'changes' | 'off';
  /** Pins the requests running on this server at once (issue #26). @default the daemon's `maxConcurrentCalls`, else adaptive (issue #35) */
  maxConcurrentCalls?: number;
  /** Pins the requests waiting for a slot on this server. @default the daemon's `queueSize`, else bounded by deadlines (issue #35) */
  queueSize?: number;
  /**
   * Absolute paths or `file://` URIs: what `roots/list` answers this server outside an agent's
   * call, and the bounds of an agent's roots during one (issue #36 item 1). @default none
   */
  roots?: string[];
  /** A stdio server's bubblewrap sandbox (issue #42); see `SandboxSettingsSchema`. @default the daemon's `sandbox`, else none */
  sandbox?: SandboxSettings;
  /**
   * Results of this server's tools over this many tokens reach agents cut, with a handle (issue
   * #38); 0 = off. @default the daemon's `maxResultTokens`
   */
  maxResultTokens?: number;
}

/** How Switchboard signs in to an OAuth upstream (issues #16, #29); see `OAuthSettingsSchema`. */
export interface ServerOAuthConfig {
  /** @default "authorization_code" (a person signs in); "client_credentials" is unattended */
  grant?: 'authorization_code' | 'client_credentials' | 'jwt_bearer';
  /** A client id registered beforehand; without one the client registers itself. */
  clientId?: string;
  clientSecret?: string;
  /** @default what the authorization server prefers */
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post';
  /** A key file path, or the key itself (PEM or JWK) from `!cmd` / `${VAR}`: RFC 7523 client assertions. */
  privateKeyJwt?: string;
  /** `jwt_bearer`: the workload identity token, or the path of the file a platform keeps it in. */
  assertion?: string;
  /** @default the key's own algorithm */
  signingAlgorithm?: (typeof CLIENT_ASSERTION_ALGS)[number];
  /** @default the scopes the server's challenge or metadata names */
  scopes?: string[];
  /** An https URL publishing this client's metadata (Client ID Metadata Documents). */
  clientMetadataUrl?: string;
}

export type TransportKind = 'stdio' | 'http' | 'sse';

export type SourceLevel = 'user' | 'project' | 'native';

export interface ServerSource {
  /** Provider id, e.g. "claude-code". */
  provider: string;
  /** Human name, e.g. "Claude Code". */
  providerName: string;
  /** Absolute path of the file the entry came from. */
  path: string;
  level: SourceLevel;
}

export interface ShadowedEntry {
  name: string;
  source: ServerSource;
  /** The active server that hides this entry. */
  shadowedBy: { name: string; source: ServerSource };
  reason: 'name' | 'same-connection';
}

/** An entry discovery found valid but will not connect, with the reason (SPEC §11). */
export interface SkippedEntry {
  name: string;
  source: ServerSource;
  reason: 'self';
  /** Human text, e.g. "points at this Switchboard itself". */
  message: string;
}

export interface DiscoveryWarning {
  message: string;
  /** Absolute path of the file the warning is about. */
  path?: string;
  /** 1-based position, for files that failed to parse. */
  line?: number;
  column?: number;
  /** Provider id, when the warning comes from one provider. */
  provider?: string;
  /** Server name, when the warning is about one entry. */
  server?: string;
}

/** The settings of Switchboard's own file that only a restart applies, as discovery read them. */
export interface RestartSettings {
  /** The file (absolute). */
  path: string;
  /** Setting → SHA-256 of its value: enough to see a change, without keeping the value (a token) around. */
  digests: Readonly<Record<string, string>>;
}

export interface DiscoveryResult {
  configs: Record<string, ServerConfig>;
  sources: Record<string, ServerSource>;
  shadowed: ShadowedEntry[];
  /** Entries left out on purpose (an entry pointing at this daemon's own listener). */
  skipped: SkippedEntry[];
  warnings: DiscoveryWarning[];
  exaApiKeys: string[];
  /** Every config file discovery looked for, present or not (absolute): what live config watches. */
  files?: string[];
  /** Files that exist but could not be used; their servers keep their last good config. */
  failedFiles?: string[];
  /** Entries reported invalid, by name and file; a running server of that name keeps its last good config. */
  invalid?: Array<{ name: string; path: string }>;
  /** Settings of Switchboard's own file that only a restart applies (host, port, …), when the file was usable. */
  restartSettings?: RestartSettings;
  /** The argument policies of Switchboard's own file, when it was usable (issue #40): applied live. */
  policies?: readonly PolicyRule[];
}

/** Why a server found by discovery is not active. */
export type DisabledReason = 'project-config-disabled' | 'disabled-servers' | 'enabled-false';

interface OutcomeBase {
  name: string;
  source: ServerSource;
  /** Transport the entry would use; undefined when its `type` is unknown. */
  transport: TransportKind | undefined;
  /** The entry after `${VAR}` expansion (never `!cmd`-resolved). */
  config: ServerConfig;
}

/**
 * What discovery decided for one entry it found, so `switchboard discover` and `/status` can
 * explain every server, including the ones that will never connect.
 */
export type ServerOutcome =
  | (OutcomeBase & { status: 'active' })
  | (OutcomeBase & {
      status: 'shadowed';
      reason: ShadowedEntry['reason'];
      shadowedBy: ShadowedEntry['shadowedBy'];
    })
  | (OutcomeBase & { status: 'disabled'; reason: DisabledReason })
  | (OutcomeBase & { status: 'filtered'; reason: 'exa' })
  | (OutcomeBase & { status: 'skipped'; reason: SkippedEntry['reason']; message: string })
  | (OutcomeBase & { status: 'invalid'; errors: string[] });

export type OutcomeStatus = ServerOutcome['status'];

/** Everything discovery reads from outside; all injectable so tests never touch the real home. */
export interface DiscoveryOptions {
  /** Project directory whose project-level files are read. */
  cwd: string;
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Selects OS-specific locations (Claude Desktop, VS Code user dir). @default process.platform */
  platform?: NodeJS.Platform;
  /** Switchboard's own file; else `$SWITCHBOARD_CONFIG`, else `~/.config/switchboard/config.json`. */
  configPath?: string;
  /** Overrides the native file's `enableProjectConfig`. */
  enableProjectConfig?: boolean;
  /**
   * Ports this Switchboard listens on: an http/sse entry whose URL names this machine on one of
   * them is skipped, since connecting would aggregate the daemon into itself. @default []
   */
  selfPorts?: readonly number[];
}

export interface DiscoveryReport extends DiscoveryResult {
  /** One outcome per entry found, in precedence order. */
  outcomes: ServerOutcome[];
  /** The native file that was (or would have been) read. */
  configPath: string;
}
