import type { MCPManager } from '../upstream/manager.js';
import type { ServerStatus } from '../events/daemon-events.js';
import type { Logger } from 'pino';
import type { EventBus } from '../events/event-bus.js';
import type { SwitchboardRuntime } from '../runtime/runtime.js';

/** One server as the startup summary shows it. */
export interface StartupRow {
  name: string;
  status: ServerStatus;
  tools: number;
  /** Connect + list time; null while it is still connecting. */
  ms: number | null;
  /** Its tools came from the cache at the startup gate. */
  cached: boolean;
  error?: string;
}

export interface StartupSummary {
  /** From `track` to the startup gate. */
  ms: number;
  tools: number;
  /** Servers whose tools the cache served at the gate. */
  cacheHits: number;
  failed: number;
  servers: StartupRow[];
}

/**
 * Watches the bus from before `start()` so that, once the startup gate resolves,
 * `serve` can print what a person wants to see first: each server, its status, its tools and
 * how long it took, and how much the cache saved.
 */
export function trackStartup({ bus, manager }: { bus: Pick<EventBus, 'subscribe'>; manager: Pick<MCPManager, 'listServers' | 'getTools'> }, now: () => number = Date.now) {
  const startedAt = now();
  const connecting = new Map<string, number>();
  const took = new Map<string, number>();
  const cached = new Set<string>();
  const unsubscribe = bus.subscribe((event) => {
    if (event.type === 'server.status') {
      if (event.status === 'connecting') connecting.set(event.server, now());
      else if (event.status === 'connected' || event.status === 'failed') {
        took.set(event.server, now() - (connecting.get(event.server) ?? startedAt));
      }
    } else if (event.type === 'tools.changed' && event.deferred && event.toolCount > 0) {
      cached.add(event.server);
    }
  });

  return {
    /** The summary as of now; stops tracking. */
    summary(): StartupSummary {
      unsubscribe();
      const servers = manager.listServers().map((server): StartupRow => {
        const row: StartupRow = {
          name: server.name,
          status: server.status,
          tools: server.toolCount,
          ms: took.get(server.name) ?? null,
          cached: cached.has(server.name),
        };
        if (server.status === 'failed' && server.lastError) row.error = server.lastError.message.split('\n', 1)[0] ?? '';
        return row;
      });
      return {
        ms: now() - startedAt,
        tools: manager.getTools().length,
        cacheHits: servers.filter((s) => s.cached).length,
        failed: servers.filter((s) => s.status === 'failed').length,
        servers,
      };
    },
    stop: unsubscribe,
  };
}

/** A config entry a newcomer can paste: a real server, runnable with nothing but npx. */
const EXAMPLE_ENTRY = '{"mcpServers": {"everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}}}';

/**
 * The start found nothing to serve: say where discovery looked and how to add a server, so an
 * empty catalogue is never a mystery. Live config picks the new entry up without a restart.
 */
export function logNoServers({ runtime, logger }: { runtime: Pick<SwitchboardRuntime, 'lastDiscovery' | 'watchedDirs'>; logger: Pick<Logger, 'warn'> }, configPath: string): void {
  const { files = [], warnings, shadowed, skipped } = runtime.lastDiscovery;
  const live = runtime.watchedDirs.length > 0 ? ' (picked up live, no restart needed)' : ' (then run switchboard reload)';
  // Entries that were found but cannot run were each logged just before: point there first.
  const problems = warnings.length + shadowed.length + skipped.length;
  const seeAbove = problems > 0 ? ` (${problems} config ${problems === 1 ? 'problem is' : 'problems are'} logged above)` : '';
  logger.warn({ looked: files, configPath }, `no MCP servers to start in ${files.length} config files${seeAbove}; add one to ${configPath}, e.g. ${EXAMPLE_ENTRY}${live}`);
}
