import { pino, type Logger } from 'pino';
import { DaemonConfigSchema } from './config/schema.js';
import type { DiscoveryOptions } from './config/types.js';
import type { ConnectOptions } from './upstream/transport/client.js';
import type { MCPManager } from './upstream/manager.js';
import type { BridgedTool } from './upstream/catalogue/tool-bridge.js';
import type { ToolCacheStore } from './store/ports.js';
import { NoopToolCacheStore } from './store/tool-cache-store.js';
import { createDaemon } from './daemon.js';
import type { EventBus } from './events/event-bus.js';
import type { LoadError, SwitchboardRuntime } from './runtime/runtime.js';

export interface LoadMCPToolsOptions extends Partial<Omit<DiscoveryOptions, 'cwd'>> {
  /** @default silent */
  logger?: Logger;
  /** A ready store (the caller's to close); wins over `dbPath`. */
  store?: ToolCacheStore;
  /** SQLite file for the tool cache (stdio children are recorded beside it). @default no cache */
  dbPath?: string;
  /** @default 250 */
  startupGateMs?: number;
  /** Run `!cmd` values from project-level files. @default false */
  trustProjectCommands?: boolean;
  connectOptions?: Pick<ConnectOptions, 'roots' | 'inheritEnv' | 'sandbox' | 'clientInfo'>;
  /** Watch the config files and apply edits live, as the daemon does. @default false */
  watchConfig?: boolean;
}

export interface LoadedMCPTools {
  /** The catalogue when the startup gate resolved; deferred tools are flagged. */
  tools: readonly BridgedTool[];
  /** Per-server failures, or `{ path: ".mcp.json" }` when discovery itself failed. */
  errors: LoadError[];
  manager: MCPManager;
  runtime: SwitchboardRuntime;
  /** Every event of the runtime from here on, stamped with its `seq` (as `/events` sends them). */
  bus: EventBus;
}

/**
 * The embeddable runtime in one call: discover, connect behind the startup gate, and hand back
 * the tools and the manager that keeps them current. Built by the same composition root as the
 * daemon, with the daemon's defaults except: silent logs, no cache file unless `dbPath`, no live
 * config unless `watchConfig`, and no OAuth sign-in (no listener to come back to). Close with
 * `runtime.close()`.
 */
export async function discoverAndLoadMCPTools(cwd: string, options: LoadMCPToolsOptions = {}): Promise<LoadedMCPTools> {
  const defaults = DaemonConfigSchema.parse({});
  const store = options.store ?? (options.dbPath === undefined ? new NoopToolCacheStore() : undefined);
  const config = DaemonConfigSchema.parse({
    startupGateMs: options.startupGateMs ?? defaults.startupGateMs,
    trustProjectCommands: options.trustProjectCommands ?? defaults.trustProjectCommands,
    ...(options.connectOptions?.inheritEnv !== undefined ? { inheritEnv: options.connectOptions.inheritEnv } : {}),
    watch: options.watchConfig ?? false,
    logLevel: 'silent',
    ...(options.dbPath !== undefined ? { dbPath: options.dbPath } : {}),
    ...(options.enableProjectConfig !== undefined ? { enableProjectConfig: options.enableProjectConfig } : {}),
  });
  // Unset, the native file's own `enableProjectConfig` decides: discovery is told only a value given here.
  if (options.enableProjectConfig === undefined) delete (config as { enableProjectConfig?: boolean }).enableProjectConfig;
  // The daemon's own composition root; its HTTP app is built but never listens.
  const { bus, manager, runtime, start } = createDaemon(config, {
    cwd,
    logger: options.logger ?? pino({ level: 'silent' }),
    ...(store ? { store } : {}),
    ...(options.home !== undefined ? { home: options.home } : {}),
    ...(options.env !== undefined ? { env: options.env } : {}),
    ...(options.platform !== undefined ? { platform: options.platform } : {}),
    ...(options.configPath !== undefined ? { configPath: options.configPath } : {}),
    ...(options.connectOptions?.clientInfo ? { clientInfo: options.connectOptions.clientInfo } : {}),
    ...(options.connectOptions?.roots ? { roots: options.connectOptions.roots } : {}),
  });
  const errors = await start();
  return { tools: manager.getTools(), errors, manager, runtime, bus };
}
