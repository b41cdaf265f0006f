import { SwitchboardError } from '../../errors.js';
import type { Clock, ClockTimer } from '../../util/clock.js';

/** Frees the slot a request holds; a second call does nothing. */
export type Release = () => void;

export interface GateWait {
  signal?: AbortSignal;
  /** How long the request may wait for a slot (what is left of its own deadline). */
  timeoutMs: number;
  /** The error of a wait that outlived `timeoutMs`: the request's own timeout code. */
  timedOut: () => SwitchboardError;
}

interface Waiter {
  resolve: (release: Release) => void;
  reject: (err: unknown) => void;
  timer?: ClockTimer;
  signal?: AbortSignal;
  onAbort?: () => void;
  queuedAt: number;
}

/** The first Retry-After estimate, before any slot was held long enough to learn from. */
const DEFAULT_HOLD_MS = 1_000;

/**
 * How many requests one upstream runs at once (issue #26 item 1): `limit` slots, and a FIFO
 * queue of `queueSize` requests waiting for one. A request waits at most what is left of its own
 * deadline — the time queued counts against it — and a full queue refuses at once with
 * `SERVER_BUSY`, its `retryAfterMs` estimated from how long slots have been held lately.
 */
export class CallGate {
  #active = 0;
  readonly #queue: Waiter[] = [];
  /** Moving average of how long a slot is held, for Retry-After. */
  #holdMs = DEFAULT_HOLD_MS;

  /** How long the requests that queued waited for their slot. */
  readonly waits = new WaitHistogram();

  constructor(
    readonly limit: number,
    readonly queueSize: number,
    private readonly clock: Clock,
  ) {}

  get inFlight(): number {
    return this.#active;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /** A slot at once when one is free (the common case: no promise, no timer), else undefined. */
  tryEnter(): Release | undefined {
    if (this.#active >= this.limit || this.#queue.length > 0) return undefined;
    this.#active++;
    return this.#releaser();
  }

  /** Waits in line for a slot; refuses with `SERVER_BUSY` when the line is full. */
  enter(server: string, wait: GateWait): Promise<Release> {
    const now = this.tryEnter();
    if (now) return Promise.resolve(now);
    if (this.#queue.length >= this.queueSize) {
      const retryAfterMs = Math.max(1_000, Math.ceil((this.#holdMs * (this.#queue.length + 1)) / this.limit));
      return Promise.reject(
        new SwitchboardError(
          'SERVER_BUSY',
          `MCP server "${server}" is busy: ${this.#active} requests running (maxConcurrentCalls ${this.limit}) and ${this.#queue.length} waiting (queueSize ${this.queueSize})`,
          { retryAfterMs },
        ),
      );
    }
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

  #releaser(): Release {
    const since = this.clock.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holdMs = this.#holdMs * 0.8 + (this.clock.now() - since) * 0.2;
      const next = this.#queue.shift();
      if (!next) {
        this.#active--;
        return;
      }
      // The slot passes straight to the first in line: nobody can overtake it.
      this.#settle(next);
      this.waits.record(this.clock.now() - next.queuedAt);
      next.resolve(this.#releaser());
    };
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
