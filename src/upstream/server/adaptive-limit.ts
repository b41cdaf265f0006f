/**
 * How many requests one upstream may run at once (issue #35 item 1): learned from the server's
 * own latency by default, or pinned by `maxConcurrentCalls`.
 *
 * Netflix's Gradient2 and Vegas limits, and Envoy's adaptive concurrency filter, compare the
 * latency now against a no-load latency (a long-term average, the minimum seen, or a minimum
 * re-measured at a pinned low concurrency). An MCP server's calls differ in length by the work
 * they ask for — one tool answers in 0.5 s, the next call of the same tool in 6 s — so the
 * minimum is far below the median even with nothing queued, and re-measuring it at a concurrency
 * of 3 would hold a burst of 200 calls to 3 for minutes. So the gradient is measured instead of
 * assumed: each finished call is a point (calls in flight when it started, its latency), and a
 * weighted least-squares line over the recent points gives how much one more concurrent call
 * adds to every call's latency. A server that runs calls in parallel shows no such slope,
 * whatever the calls' lengths; one that serves a call at a time shows a call's whole service time
 * per call ahead of it.
 *
 * - **Grow** by one for each finished call while calls wait (or every slot is taken) and the
 *   fit shows no clear rise: one more per answer doubles the limit every round trip (TCP's slow
 *   start). Once the fit vouches for more — with its slope at the top of its error band a call
 *   would still be within tolerance there — straight to that, at most doubling per answer; so a
 *   server that serves in parallel goes from 16 to 200 within a few of its round trips.
 * - **Shrink** when the rise is clear (the slope is `SIGNIFICANCE` standard errors above zero)
 *   and the line says that, at the current limit, a call takes more than `1 + tolerance` times
 *   what it takes alone (at least `ALONE_FLOOR_MS`): to the concurrency where it would take
 *   exactly that, at most halving per answer. A server that serves one call at a time settles
 *   at `1 + tolerance` = 3, or 2 when the line puts it a hair under.
 * - Never below `floor`, never above `ceiling`; the limit moves only on answers, so an idle
 *   server keeps its last limit.
 */

export type LimitMode = 'adaptive' | 'fixed';

/** What the limit learns from one answered request. */
export interface LimitSample {
  /** How long the server took to answer it, in ms. */
  latencyMs: number;
  /** Slots held when it took its slot, itself included. */
  inFlight: number;
  /** Requests were waiting, or every slot was taken, when it finished: only then may the limit grow. */
  saturated: boolean;
}

/** A concurrency limit as the call gate uses it and `GET /servers/:name` shows it. */
export interface ConcurrencyLimit {
  readonly mode: LimitMode;
  /** Requests that may run at once, now. */
  readonly value: number;
  /** Why the limit is what it is: its last change, or its start. */
  readonly reason: string;
  /** When it last changed (ms since the epoch); undefined until it has. */
  readonly changedAt: number | undefined;
  observe(sample: LimitSample, now: number): void;
}

export interface AdaptiveSettings {
  /** @default 1 */
  floor: number;
  /** Where a server starts, before any answer: today's fixed default. @default 16 */
  initial: number;
  /** @default 1000 */
  ceiling: number;
  /** How far a call's latency may rise over what it takes alone before the limit backs off: 2 = to 3×. @default 2 */
  tolerance: number;
}

export const DEFAULT_ADAPTIVE: Readonly<AdaptiveSettings> = Object.freeze({ floor: 1, initial: 16, ceiling: 1_000, tolerance: 2 });

/** Each older point weighs this much less per newer one: the fit remembers about the last 50 answers. */
const DECAY = 0.98;
/** Points (weighted) the fit needs before it says anything. */
const MIN_POINTS = 8;
/** Concurrency that never varied says nothing about a slope (a variance this small is rounding). */
const MIN_SPREAD = 1e-6;
/** A rise counts when the slope is this many standard errors above zero. */
const SIGNIFICANCE = 3;
/**
 * What a call is taken to need alone, at the least, in ms: a rise of `tolerance` × this (100 ms)
 * is always allowed. For calls of a few ms the daemon's and the machine's own scheduling (a GC
 * pause, a busy core) move latency more than the server's capacity does, and more so for the calls
 * that started with more in flight; a limit cut below what the agents send makes each of their
 * calls wait here for a round trip, and 100 ms is nothing to an agent whose step takes seconds.
 * (B2 on a busy 2-core box: with 10 ms, echo's limit dipped under its 8 in flight.)
 */
const ALONE_FLOOR_MS = 50;
/** Slack for comparing concurrencies computed from running sums in floating point. */
const EPSILON = 0.01;

/** `maxConcurrentCalls` pinned in the config: today's fixed cap. */
export class FixedLimit implements ConcurrencyLimit {
  readonly mode = 'fixed';
  readonly changedAt = undefined;
  readonly reason: string;

  constructor(readonly value: number) {
    this.reason = `pinned by maxConcurrentCalls ${value}`;
  }

  observe(): void {}
}

/** The limit learned from latency (see the file's comment). */
export class AdaptiveLimit implements ConcurrencyLimit {
  readonly mode = 'adaptive';
  #value: number;
  #reason: string;
  #changedAt: number | undefined;
  readonly #fit = new LatencyFit();

  constructor(private readonly settings: AdaptiveSettings = DEFAULT_ADAPTIVE) {
    this.#value = Math.min(settings.ceiling, Math.max(settings.floor, settings.initial));
    this.#reason = `adaptive: starts at ${this.#value}, before any answer`;
  }

  get value(): number {
    return this.#value;
  }

  get reason(): string {
    return this.#reason;
  }

  get changedAt(): number | undefined {
    return this.#changedAt;
  }

  observe(sample: LimitSample, now: number): void {
    this.#fit.add(sample.inFlight, sample.latencyMs);
    const { floor, ceiling, tolerance } = this.settings;
    const value = this.#value;
    const line = this.#fit.line();
    if (!line) {
      if (sample.saturated && value < ceiling) this.#set(value + 1, now, 'grew: requests waited (too few answers yet to see a rise)');
      return;
    }
    // What one call takes alone (at least ALONE_FLOOR_MS), and the concurrency at which the line
    // has a call take (1 + tolerance)× that.
    const alone = Math.max(ALONE_FLOOR_MS, line.intercept + line.slope);
    const at = (slope: number): number => (slope > 0 ? 1 + (tolerance * alone) / slope : Infinity);
    const rises = line.slope > SIGNIFICANCE * line.slopeError;
    if (rises && value > at(line.slope) + EPSILON) {
      const next = Math.max(floor, Math.floor(at(line.slope) + EPSILON), Math.floor(value / 2));
      const took = Math.round(line.intercept + line.slope * value);
      this.#set(
        next,
        now,
        `shrank: latency rises with concurrency (+${round(line.slope)} ms per request in flight); at ${value} in flight one would take ${took} ms, more than ${1 + tolerance}× the ${Math.round(alone)} ms it takes alone`,
      );
      return;
    }
    if (!sample.saturated) return;
    // As far as the line vouches for with its slope at the top of its error band, at most doubling
    // per answer; with a clear rise, no further than the line itself allows.
    const vouched = Math.min(2 * value, Math.floor(at(Math.max(0, line.slope) + SIGNIFICANCE * line.slopeError) + EPSILON));
    const cap = rises ? Math.min(ceiling, Math.floor(at(line.slope) + EPSILON)) : ceiling;
    const next = Math.min(cap, Math.max(value + 1, vouched));
    if (next <= value) return;
    const why = rises ? `latency stays within ${1 + tolerance}× one alone at ${next} in flight` : 'latency does not rise with concurrency';
    this.#set(next, now, `grew: requests waited and ${why}`);
  }

  #set(value: number, now: number, reason: string): void {
    if (value === this.#value) return;
    this.#value = value;
    this.#reason = reason;
    this.#changedAt = now;
  }
}

const round = (x: number): string => (x >= 10 ? String(Math.round(x)) : x.toFixed(1));

/** The least-squares line latency = intercept + slope × inFlight over exponentially weighted points. */
interface Line {
  intercept: number;
  slope: number;
  /** The slope's standard error. */
  slopeError: number;
}

/** Running weighted sums for the line; O(1) per point, no history kept. */
class LatencyFit {
  #w = 0;
  #x = 0;
  #y = 0;
  #xx = 0;
  #xy = 0;
  #yy = 0;

  add(x: number, y: number): void {
    this.#w = this.#w * DECAY + 1;
    this.#x = this.#x * DECAY + x;
    this.#y = this.#y * DECAY + y;
    this.#xx = this.#xx * DECAY + x * x;
    this.#xy = this.#xy * DECAY + x * y;
    this.#yy = this.#yy * DECAY + y * y;
  }

  line(): Line | undefined {
    const w = this.#w;
    if (w < MIN_POINTS) return undefined;
    const mx = this.#x / w;
    const my = this.#y / w;
    const varX = this.#xx / w - mx * mx;
    if (varX < MIN_SPREAD) return undefined;
    const cov = this.#xy / w - mx * my;
    const varY = Math.max(0, this.#yy / w - my * my);
    const slope = cov / varX;
    const residual = Math.max(0, varY - slope * cov);
    return { intercept: my - slope * mx, slope, slopeError: Math.sqrt(residual / (w * varX)) };
  }
}
