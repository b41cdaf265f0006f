import { WAIT_BUCKETS_MS, type WaitHistogram } from '../../upstream/server/call-gate.js';
import type { TrafficState } from '../../upstream/server/upstream.js';
import { escapeLabel } from '../../util/prometheus-label.js';

export interface ServerTraffic {
  server: string;
  state: TrafficState;
  waits: WaitHistogram;
}

/**
 * Per-server traffic control (issues #26, #35) as Prometheus text: requests running and queued,
 * the concurrency limit in force, the queue-wait histogram (requests that had to queue), and
 * whether the server asked for a pause.
 */
export function renderTrafficMetrics(servers: readonly ServerTraffic[]): string[] {
  const label = (server: string): string => `server="${escapeLabel(server)}"`;
  const lines = [
    '# HELP switchboard_upstream_requests_in_flight Requests running on the MCP server (slots of its concurrency limit in use).',
    '# TYPE switchboard_upstream_requests_in_flight gauge',
    ...servers.map(({ server, state }) => `switchboard_upstream_requests_in_flight{${label(server)}} ${state.inFlight}`),
    '# HELP switchboard_upstream_requests_queued Requests waiting for a slot on the MCP server.',
    '# TYPE switchboard_upstream_requests_queued gauge',
    ...servers.map(({ server, state }) => `switchboard_upstream_requests_queued{${label(server)}} ${state.queued}`),
    '# HELP switchboard_upstream_concurrency_limit Requests the MCP server may run at once: adaptive (learned from its latency) unless maxConcurrentCalls pins it.',
    '# TYPE switchboard_upstream_concurrency_limit gauge',
    ...servers.map(({ server, state }) => `switchboard_upstream_concurrency_limit{${label(server)}} ${state.limit}`),
    '# HELP switchboard_upstream_paused 1 while the MCP server asked for no requests (HTTP 429/503 with Retry-After).',
    '# TYPE switchboard_upstream_paused gauge',
    ...servers.map(({ server, state }) => `switchboard_upstream_paused{${label(server)}} ${state.pausedUntil === null ? 0 : 1}`),
    '# HELP switchboard_upstream_queue_wait_seconds How long requests that had to queue waited for a slot.',
    '# TYPE switchboard_upstream_queue_wait_seconds histogram',
  ];
  for (const { server, waits } of servers) {
    WAIT_BUCKETS_MS.forEach((bound, i) => lines.push(`switchboard_upstream_queue_wait_seconds_bucket{${label(server)},le="${bound / 1000}"} ${waits.counts[i]}`));
    lines.push(`switchboard_upstream_queue_wait_seconds_bucket{${label(server)},le="+Inf"} ${waits.count}`);
    lines.push(`switchboard_upstream_queue_wait_seconds_sum{${label(server)}} ${waits.sumMs / 1000}`);
    lines.push(`switchboard_upstream_queue_wait_seconds_count{${label(server)}} ${waits.count}`);
  }
  return lines;
}
