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

export interface DiscoveryWarning {
  message: string;
  path?: string;
  line?: number;
  column?: number;
}

export interface DiscoveryResult {
  configs: Record<string, ServerConfig>;
  sources: Record<string, ServerSource>;
  shadowed: ShadowedEntry[];
  warnings: DiscoveryWarning[];
  exaApiKeys: string[];
}
