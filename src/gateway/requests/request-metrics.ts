import type { CallOutcome, CallTransport } from './call-metrics.js';
import { escapeLabel } from '../../util/prometheus-label.js';

/** What one upstream request is counted under. */
export interface RequestLabels {
  transport: CallTransport;
  /** The server it went to; '' when it named nothing known, or went to every server (`logging/setLevel`). */
  server: string;
  /** The MCP method: `tools/call`, `prompts/get`, `resources/read`, … (a fixed set). */
  method: string;
  outcome: CallOutcome;
}

/**
 * `switchboard_upstream_requests_total`: every request the runner sends upstream, of every kind,
 * beside the per-tool counter of tool calls. The labels are bounded: transports and methods are
 * fixed sets, servers are the configured ones.
 */
export class RequestMetrics {
  /** Request counts per label set, keyed by the rendered label text. */
  private readonly counts = new Map<string, number>();

  record({ transport, server, method, outcome }: RequestLabels): void {
    const key = `transport="${transport}",server="${escapeLabel(server)}",method="${method}",outcome="${outcome}"`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  render(): string[] {
    const lines = [
      '# HELP switchboard_upstream_requests_total Requests sent to upstream servers (REST and /mcp) by transport, server, method and outcome.',
      '# TYPE switchboard_upstream_requests_total counter',
    ];
    for (const [key, n] of [...this.counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) lines.push(`switchboard_upstream_requests_total{${key}} ${n}`);
    return lines;
  }
}
