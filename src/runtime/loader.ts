import { homedir } from 'node:os';
import type { Logger } from 'pino';
import { discoverMCPServers } from '../config/discover.js';
import { createValueResolver } from '../config/resolve-values.js';
import type { DiscoveryOptions } from '../config/types.js';
import type { ConnectOptions } from '../mcp/transport/client.js';
import { MCPManager } from '../mcp/manager.js';
import type { BridgedTool } from '../mcp/catalogue/tool-bridge.js';
import { SwitchboardRuntime, type LoadError } from './runtime.js';
import { openToolCache } from '../store/open-tool-cache.js';
import type { ToolCacheStore } from '../store/ports.js';
import { NoopToolCacheStore } from '../store/tool-cache-store.js';

export interface LoadMCPToolsOptions extends Partial<Omit<DiscoveryOptions, 'cwd'>> {
  logger?: Logger;
  /** A ready store; wins over `dbPath`. */
  store?: ToolCacheStore;
  /** SQLite file for the tool cache. @default no cache */
  dbPath?: string;
  /** @default 250 */
  startupGateMs?: number;
  /** Run `!cmd` values from project-level files. @default false */
  trustProjectCommands?: boolean;
  connectOptions?: Pick<ConnectOptions, 'roots' | 'inheritEnv' | 'clientInfo'>;
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
}

/**
 * The embeddable runtime in one call: discover, connect behind the startup gate, and hand back
 * the tools and the manager that keeps them current. Close with `runtime.close()`.
 */
export async function discoverAndLoadMCPTools(cwd: string, options: LoadMCPToolsOptions = {}): Promise<LoadedMCPTools> {
  const env = options.env ?? process.env;
  const home = options.home ?? homedir();
  // A store we open here is ours to close; one handed in belongs to the caller.
  const ownsStore = options.store === undefined;
  const store =
    options.store ??
    (options.dbPath ? openToolCache(options.dbPath, options.logger ? { logger: options.logger } : {}).store : new NoopToolCacheStore());
  const resolver = createValueResolver({
    trustProjectCommands: options.trustProjectCommands ?? false,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const manager = new MCPManager({
    ...(options.logger ? { logger: options.logger } : {}),
    store,
    ...(options.startupGateMs !== undefined ? { startupGateMs: options.startupGateMs } : {}),
    env,
    resolveValues: async (name, config, source) => (await resolver.resolve(name, config, source)).config,
    connectOptions: { roots: [cwd], ...options.connectOptions },
  });
  const runtime = new SwitchboardRuntime({
    manager,
    discover: () =>
      discoverMCPServers({
        cwd,
        home,
        env,
        ...(options.platform ? { platform: options.platform } : {}),
        ...(options.configPath ? { configPath: options.configPath } : {}),
        ...(options.enableProjectConfig !== undefined ? { enableProjectConfig: options.enableProjectConfig } : {}),
      }),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(ownsStore ? { onClosed: () => store.close() } : {}),
    watchConfig: options.watchConfig ?? false,
  });
  const errors = await runtime.start();
  return { tools: manager.getTools(), errors, manager, runtime };
}
