import { SwitchboardError } from '../../errors.js';
import type { Clock, ClockTimer } from '../../util/clock.js';
import { AdaptiveLimit, FixedLimit, type AdaptiveSettings, type ConcurrencyLimit } from './adaptive-limit.js';

/**
 * Frees the slot a request holds; a second call does nothing. `answeredInMs`: how long the server
 * took to answer it (its last attempt: a result, an error answer, or its deadline), what the limit
 * learns from; undefined when there is nothing to learn (abandoned by its caller, connection lost).
 */
export type Release = (answeredInMs?: number) => void;

export interface GateWait {
  signal?: AbortSignal;
  /** How long the request may wait for a slot (what is left of its own deadline). */
  timeoutMs: number;
  /** The error of a wait that outlived `timeoutMs`: the request's own timeout code. */
  timedOut: () => SwitchboardError;
}

/** The limits of one server's gate: each pinned when the config sets it. */
export interface GateSettings {
  /** A fixed cap; undefined: the adaptive limit. */
  maxConcurrentCalls?: number | undefined;
  /** A fixed bound of the queue; undefined: bounded by the requests' deadlines and `HARD_QUEUE_BOUND`. */
  queueSize?: number | undefined;
  /** The adaptive limit's floor, start, ceiling and tolerance. @default DEFAULT_ADAPTIVE */
  adaptive?: AdaptiveSettings;
}

export type QueueMode = 'deadline' | 'fixed';

interface Waiter {
  resolve: (release: Release) => void;
  reject: (err: unknown) => void;
  timer?: ClockTimer;
  signal?: AbortSignal;
  onAbort?: () => void;
  queuedAt: number;
}

/** Requests that may wait for one server when the queue is bounded by deadlines: a guard, not a policy. */
export const HARD_QUEUE_BOUND = 10_000;
/** Answers the gate needs before it trusts its service time enough to refuse anyone on it. */
const MIN_OBSERVATIONS = 3;
/** The Retry-After estimate of a full queue before any answer. */
const DEFAULT_SERVICE_MS = 1_000;

/**
 * How many requests one upstream runs at once, and who waits (issues #26, #35): `limit` slots
 * (adaptive-limit.ts, or pinned), and a FIFO queue. A request waits while it can still make its
 * own deadline — the time queued counts against it — and is refused at once with `SERVER_BUSY`
 * only when its expected wait (requests ahead × observed service time ÷ limit) is longer than
 * what is left of its deadline, or when the queue holds its bound (`queueSize`, else
 * `HARD_QUEUE_BOUND`). Before the server has answered `MIN_OBSERVATIONS` requests nothing is
 * known of its service time, and every request that fits the bound waits.
 */
export class CallGate {
  readonly limit: ConcurrencyLimit;
  readonly queueBound: number;
  readonly queueMode: QueueMode;
  #active = 0;
  readonly #queue: Waiter[] = [];
  /** Moving average of how long the server took to answer. */
  #serviceMs: number | undefined;
  #observations = 0;

  /** How long the requests that queued waited for their slot. */
  readonly waits = new WaitHistogram();

  constructor(
    settings: GateSettings,
    private readonly clock: Clock,
  ) {
    this.limit = settings.maxConcurrentCalls === undefined ? new AdaptiveLimit(settings.adaptive) : new FixedLimit(settings.maxConcurrentCalls);
    this.queueMode = settings.queueSize === undefined ? 'deadline' : 'fixed';
    this.queueBound = settings.queueSize ?? HARD_QUEUE_BOUND;
  }

  get inFlight(): number {
    return this.#active;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /** The service time the expected wait is computed from; undefined before enough answers. */
  get serviceMs(): number | undefined {
    return this.#observations >= MIN_OBSERVATIONS ? this.#serviceMs : undefined;
  }

  /** A slot at once when one is free (the common case: no promise, no timer), else undefined. */
  tryEnter(): Release | undefined {
    if (this.#active >= this.limit.value || this.#queue.length > 0) return undefined;
    return this.#take();
  }

  /** Waits in line for a slot; refuses with `SERVER_BUSY` when the wait cannot end in time, or the line is full. */
  enter(server: string, wait: GateWait): Promise<Release> {
    const now = this.tryEnter();
    if (now) return Promise.resolve(now);
    const refusal = this.#refusal(server, wait.timeoutMs);
    if (refusal) return Promise.reject(refusal);
    if (wait.signal?.aborted) return Promise.reject(wait.signal.reason);
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, queuedAt: this.clock.now() };
      const leave = (err: unknown): void => {
        const at = this.#queue.indexOf(waiter);
        if (at < 0) return;
        this.#queue.splice(at, 1);
        this.#settle(waiter);
        reject(err);
      };
      waiter.timer = this.clock.setTimeout(() => leave(wait.timedOut()), wait.timeoutMs);
      if (wait.signal) {
        const signal = wait.signal;
        waiter.signal = signal;
        waiter.onAbort = () => leave(signal.reason);
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.#queue.push(waiter);
    });
  }

  #refusal(server: string, budgetMs: number): SwitchboardError | undefined {
    const ahead = this.#queue.length;
    const limit = this.limit.value;
    const running = `${this.#active} requests running (limit ${limit}, ${this.limit.mode}) and ${ahead} waiting`;
    if (ahead >= this.queueBound) {
      const bound = this.queueMode === 'fixed' ? `queueSize ${this.queueBound}` : `the bound of ${this.queueBound}`;
      const retryAfterMs = Math.max(1_000, Math.ceil(((this.#serviceMs ?? DEFAULT_SERVICE_MS) * (ahead + 1)) / limit));
      return new SwitchboardError('SERVER_BUSY', `MCP server "${server}" is busy: ${running} (${bound})`, { retryAfterMs });
    }
    const serviceMs = this.serviceMs;
    if (serviceMs === undefined) return undefined;
    const expectedMs = (ahead * serviceMs) / limit;
    if (expectedMs <= budgetMs) return undefined;
    return new SwitchboardError(
      'SERVER_BUSY',
      `MCP server "${server}" is busy: ${running}; at ${Math.round(serviceMs)} ms a request the wait would be about ${Math.round(expectedMs)} ms, longer than the ${Math.round(budgetMs)} ms left of this request's deadline`,
      { retryAfterMs: Math.max(1_000, Math.ceil(expectedMs)) },
    );
  }

  #take(): Release {
    this.#active++;
    const inFlight = this.#active;
    let released = false;
    return (answeredInMs) => {
      if (released) return;
      released = true;
      const busy = this.#active >= this.limit.value || this.#queue.length > 0;
      this.#active--;
      if (answeredInMs !== undefined) this.#learn(answeredInMs, inFlight, busy);
      this.#admit();
    };
  }

  #learn(latencyMs: number, inFlight: number, saturated: boolean): void {
    this.#serviceMs = this.#serviceMs === undefined ? latencyMs : this.#serviceMs * 0.8 + latencyMs * 0.2;
    this.#observations++;
    this.limit.observe({ latencyMs, inFlight, saturated }, this.clock.now());
  }

  /** Hands free slots to the first in line — all of them when the limit just grew; nobody overtakes. */
  #admit(): void {
    while (this.#active < this.limit.value) {
      const next = this.#queue.shift();
      if (!next) return;
      this.#settle(next);
      this.waits.record(this.clock.now() - next.queuedAt);
      next.resolve(this.#take());
    }
  }

  #settle(waiter: Waiter): void {
    this.clock.clearTimeout(waiter.timer);
    if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
  }
}

/** Upper bounds of the queue-wait buckets, in ms (Prometheus `le`, in seconds, on `/metrics`). */
export const WAIT_BUCKETS_MS = [1, 5, 10, 50, 100, 500, 1_000, 5_000, 10_000, 30_000] as const;

/** A cumulative histogram of waits, the shape Prometheus wants. */
export class WaitHistogram {
  /** `counts[i]`: waits of at most `WAIT_BUCKETS_MS[i]`; the last entry is `+Inf`. */
  readonly counts: number[] = new Array<number>(WAIT_BUCKETS_MS.length + 1).fill(0);
  sumMs = 0;
  count = 0;

  record(ms: number): void {
    this.sumMs += ms;
    this.count++;
    for (let i = 0; i < WAIT_BUCKETS_MS.length; i++) if (ms <= (WAIT_BUCKETS_MS[i] as number)) this.counts[i] = (this.counts[i] as number) + 1;
    this.counts[WAIT_BUCKETS_MS.length] = (this.counts[WAIT_BUCKETS_MS.length] as number) + 1;
  }
}
