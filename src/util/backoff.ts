/**
 * Reconnect delays (SPEC §6): 500 ms, 1 s, 2 s, 4 s, doubling up to 5 min, each spread by jitter
 * so many servers that fell together do not retry together. Pure: the randomness is injected.
 */
export interface BackoffPolicy {
  /** The first delay. @default 500 */
  baseMs: number;
  /** No delay is longer. @default 300000 */
  maxMs: number;
  /** Each delay is scaled by a factor in [1 - jitter, 1 + jitter]. @default 0.2 */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 500, maxMs: 300_000, jitter: 0.2 };

/** The delay before retry `attempt` (1-based). */
export function backoffDelay(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const exponent = Math.max(0, Math.min(attempt - 1, 30));
  const plain = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
  const factor = 1 - policy.jitter + 2 * policy.jitter * random();
  return Math.round(Math.min(policy.maxMs, plain * factor));
}

/**
 * Failures inside a sliding window: more than `limit` within `windowMs` is a crash loop. Pure
 * apart from the array it keeps; times come from the caller's clock.
 */
export class FailureWindow {
  private readonly times: number[] = [];

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Records a failure at `now`; true when it makes more than `limit` within the window. */
  record(now: number): boolean {
    this.times.push(now);
    while (this.times.length > 0 && now - (this.times[0] as number) > this.windowMs) this.times.shift();
    return this.times.length > this.limit;
  }

  get count(): number {
    return this.times.length;
  }

  reset(): void {
    this.times.length = 0;
  }
}
