/**
 * Counters for REST tool calls, kept here rather than in a metrics library: a handful of
 * numbers rendered as Prometheus text is all `/metrics` needs, and recording must cost next to
 * nothing on the call hot path.
 */

export const CALL_OUTCOMES = ['ok', 'tool_error', 'not_found', 'cancelled', 'shutdown', 'error'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

/** Upper bounds (seconds) of the call duration histogram. */
export const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

export class CallMetrics {
  private readonly outcomes = new Map<CallOutcome, number>(CALL_OUTCOMES.map((o) => [o, 0]));
  /** Non-cumulative per-bucket counts; the last slot is +Inf. Made cumulative when rendered. */
  private readonly buckets = new Array<number>(DURATION_BUCKETS.length + 1).fill(0);
  private durationSum = 0;
  private durationCount = 0;

  record(outcome: CallOutcome, seconds: number): void {
    this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1);
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i += 1;
    this.buckets[i]! += 1;
    this.durationSum += seconds;
    this.durationCount += 1;
  }

  count(outcome: CallOutcome): number {
    return this.outcomes.get(outcome) ?? 0;
  }

  /** The counter and histogram in Prometheus text format, one line per sample. */
  render(): string[] {
    const lines = [
      '# HELP switchboard_tool_calls_total REST tool calls by outcome.',
      '# TYPE switchboard_tool_calls_total counter',
    ];
    for (const [outcome, n] of this.outcomes) lines.push(`switchboard_tool_calls_total{outcome="${outcome}"} ${n}`);
    lines.push(
      '# HELP switchboard_tool_call_duration_seconds Duration of REST tool calls.',
      '# TYPE switchboard_tool_call_duration_seconds histogram',
    );
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
}
