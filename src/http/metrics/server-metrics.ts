import type { ServerStatus } from '../../events/daemon-events.js';
import type { EventBus } from '../../events/event-bus.js';
import { escapeLabel } from '../../util/prometheus-label.js';

/**
 * The per-server series an operator alerts on: `switchboard_server_up` (connected right now or
 * not) and `switchboard_server_restarts_total` (how often it came back after it was lost).
 * Restarts are counted off the bus for the whole life of the daemon, not read from the server's
 * own `restarts`: that one starts again at 0 when its config is reloaded, and a Prometheus
 * counter must only go up.
 */
export class ServerMetrics {
  private readonly restarts = new Map<string, number>();
  private readonly unsubscribe: () => void;

  constructor(bus: Pick<EventBus, 'subscribe'>) {
    this.unsubscribe = bus.subscribe((event) => {
      // The same transition the manager logs as "server reconnected".
      if (event.type === 'server.status' && event.status === 'connected' && event.previous === 'reconnecting') {
        this.restarts.set(event.server, (this.restarts.get(event.server) ?? 0) + 1);
      }
    });
  }

  /** Both series for the servers the daemon knows now (a server removed from the config goes away). */
  render(servers: ReadonlyArray<{ name: string; status: ServerStatus }>): string[] {
    const sorted = [...servers].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return [
      '# HELP switchboard_server_up Whether the MCP server is connected (1) or not (0: connecting, reconnecting, needs_auth, disconnected or failed).',
      '# TYPE switchboard_server_up gauge',
      ...sorted.map(({ name, status }) => `switchboard_server_up{server="${escapeLabel(name)}"} ${status === 'connected' ? 1 : 0}`),
      '# HELP switchboard_server_restarts_total Times the MCP server was connected again after it was lost (crash, closed transport, failed ping), since the daemon started.',
      '# TYPE switchboard_server_restarts_total counter',
      ...sorted.map(({ name }) => `switchboard_server_restarts_total{server="${escapeLabel(name)}"} ${this.restarts.get(name) ?? 0}`),
    ];
  }

  close(): void {
    this.unsubscribe();
  }
}
