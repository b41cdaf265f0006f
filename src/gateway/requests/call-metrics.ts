import { escapeLabel } from '../../util/prometheus-label.js';

/**
 * Counters for tool calls (REST and `/mcp` alike), kept here rather than in a metrics library: a
 * handful of numbers rendered as Prometheus text is all `/metrics` needs, and recording must cost
 * next to nothing on the call hot path.
 */

export const CALL_OUTCOMES = ['ok', 'tool_error', 'not_found', 'cancelled', 'shutdown', 'error'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

/** Where a call came in. */
export type CallTransport = 'rest' | 'mcp';

/** Upper bounds (seconds) of the call duration histogram. */
export const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

/**
 * How many distinct tools get a series of their own. A catalogue can hold tens of thousands of
 * tools; the tools called after this many share one series (`tool="_other"`), so a scrape stays
 * small whatever the agents do.
 * @default 200
 */
export const MAX_TOOL_SERIES = 200;
/** The `tool` label of calls to tools beyond `MAX_TOOL_SERIES`. */
export const OTHER_TOOL = '_other';
/** The `tool` label of calls to names no server has (`outcome="not_found"`). */
export const UNKNOWN_TOOL = '_unknown';

/** What one call is counted under. */
export interface CallLabels {
  transport: CallTransport;
  /** The server owning the tool; '' when the name matched none. */
  server: string;
  /** The exposed tool name; ignored (UNKNOWN_TOOL) when `server` is ''. */
  tool: string;
  outcome: CallOutcome;
}

export class CallMetrics {
  /** Call counts per label set, keyed by the rendered label text. */
  private readonly counts = new Map<string, number>();
  private readonly toolSeries = new Set<string>();
  /** Non-cumulative per-bucket counts; the last slot is +Inf. Made cumulative when rendered. */
  private readonly buckets = new Array<number>(DURATION_BUCKETS.length + 1).fill(0);
  private durationSum = 0;
  private durationCount = 0;

  constructor(private readonly maxToolSeries = MAX_TOOL_SERIES) {}

  record(labels: CallLabels, seconds: number): void {
    const key = this.labelText(labels);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i += 1;
    this.buckets[i]! += 1;
    this.durationSum += seconds;
    this.durationCount += 1;
  }

  /** Calls with this outcome, over every transport, server and tool. */
  count(outcome: CallOutcome): number {
    let total = 0;
    for (const [key, n] of this.counts) if (key.endsWith(`outcome="${outcome}"`)) total += n;
    return total;
  }

  /** The counter and histogram in Prometheus text format, one line per sample. */
  render(): string[] {
    const lines = ['# HELP switchboard_tool_calls_total Tool calls (REST and /mcp) by transport, server, tool and outcome.', '# TYPE switchboard_tool_calls_total counter'];
    for (const [key, n] of [...this.counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      lines.push(`switchboard_tool_calls_total{${key}} ${n}`);
    }
    lines.push('# HELP switchboard_tool_call_duration_seconds Duration of tool calls (REST and /mcp).', '# TYPE switchboard_tool_call_duration_seconds histogram');
    let cumulative = 0;
    DURATION_BUCKETS.forEach((le, i) => {
      cumulative += this.buckets[i]!;
      lines.push(`switchboard_tool_call_duration_seconds_bucket{le="${le}"} ${cumulative}`);
    });
    cumulative += this.buckets[DURATION_BUCKETS.length]!;
    lines.push(
      `switchboard_tool_call_duration_seconds_bucket{le="+Inf"} ${cumulative}`,
      `switchboard_tool_call_duration_seconds_sum ${this.durationSum}`,
      `switchboard_tool_call_duration_seconds_count ${this.durationCount}`,
    );
    return lines;
  }

  private labelText({ transport, server, tool, outcome }: CallLabels): string {
    let shown = server === '' ? UNKNOWN_TOOL : tool;
    if (server !== '' && !this.toolSeries.has(tool)) {
      if (this.toolSeries.size < this.maxToolSeries) this.toolSeries.add(tool);
      else shown = OTHER_TOOL;
    }
    return `transport="${transport}",server="${escapeLabel(server)}",tool="${escapeLabel(shown)}",outcome="${outcome}"`;
  }
}
