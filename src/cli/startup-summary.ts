import type { MCPManager } from '../mcp/manager.js';
import type { ServerStatus } from '../mcp/events.js';
import type { EventBus } from '../runtime/event-bus.js';

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
export function trackStartup(
  { bus, manager }: { bus: Pick<EventBus, 'subscribe'>; manager: Pick<MCPManager, 'listServers' | 'getTools'> },
  now: () => number = Date.now,
) {
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
