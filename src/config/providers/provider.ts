import type { PolicyRule } from '../policy-schema.js';
import type { DiscoveryWarning, RestartSettings, ServerConfig, ServerSource } from '../types.js';

export interface ProviderContext {
  /** Absolute project directory. */
  cwd: string;
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  platform: NodeJS.Platform;
  /** Explicit `--config` path, if any. */
  configPath?: string;
}

/** One server entry as a provider found it, before any filtering or dedup. */
export interface DiscoveredItem {
  name: string;
  /** Normalised and `${VAR}`-expanded. */
  config: ServerConfig;
  source: ServerSource;
  /** Problems found while reading the entry (wrong field types, schema errors). */
  errors: string[];
}

/** Settings of Switchboard's own file that steer discovery. */
export interface NativeSettings {
  enableProjectConfig: boolean;
  disabledServers: readonly string[];
  enabledServers: readonly string[];
  /** Argument policies (issue #40): applied live, the whole set at once. */
  policies?: readonly PolicyRule[];
}

export interface ProviderResult {
  items: DiscoveredItem[];
  warnings: DiscoveryWarning[];
  /** Only the native provider sets this. */
  settings?: NativeSettings;
  /** Every file the provider looked for (present or not), absolute: what live config watches. */
  files?: string[];
  /** Files that exist but could not be used (unreadable, bad syntax, ignored as a whole). */
  failedFiles?: string[];
  /** Only the native provider sets this: its settings that only a restart applies. */
  restartSettings?: RestartSettings;
}

export interface ConfigProvider {
  readonly id: string;
  readonly displayName: string;
  /** Higher wins; see the order in `providers/index.ts`. */
  readonly priority: number;
  read(ctx: ProviderContext): Promise<ProviderResult>;
}
