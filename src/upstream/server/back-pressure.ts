import type { Clock } from '../../util/clock.js';
import { sleep } from '../../util/wait-for.js';
import type { Throttle } from '../transport/retry-after.js';

/** How many pauses one piece of work sits out before its failure stands (see `after`). */
const MAX_PAUSES = 5;

/**
 * The pause an HTTP upstream asked for with `429`/`503` and `Retry-After` (issue #26 item 2): no
 * request goes to it before `until` — none at all (issue #35 item 3): calls, pings, re-lists,
 * connect attempts and the era companion wait for it before they start (`over`, `after`), and the
 * transport holds whatever else would be sent (retry-after.ts). Only ever extended, never
 * shortened, by a later answer. Not a failure of the server: its status stays, and nothing counts
 * toward suspension. One per server, on the host's clock.
 */
export class BackPressure implements Throttle {
  #until = 0;

  constructor(private readonly clock: Clock) {}

  /** The server asked for `ms` without requests. */
  pause(ms: number): void {
    this.#until = Math.max(this.#until, this.clock.now() + ms);
  }

  /** A pause the server's previous upstream was told of (a reload) still holds for this one. */
  continueFrom(previous: BackPressure): void {
    this.#until = Math.max(this.#until, previous.#until);
  }

  /** How long requests must still hold off; 0 when they may go. */
  remainingMs(): number {
    return this.#until === 0 ? 0 : Math.max(0, this.#until - this.clock.now());
  }

  /** The end of the pause in progress, for `GET /servers/:name`; undefined when none. */
  get until(): number | undefined {
    return this.remainingMs() > 0 ? this.#until : undefined;
  }

  /**
   * Whether a pause held requests at some moment after `at`: then a request started at `at` that
   * failed may have been refused for it (a 429 of its own) or held past its deadline, which says
   * nothing about the server's health.
   */
  pausedAfter(at: number): boolean {
    return this.#until > at;
  }

  /**
   * Resolves once no pause is in progress, at once when none is; a pause extended meanwhile is
   * waited out too. Rejects with `signal`'s reason if it aborts first.
   */
  async over(signal?: AbortSignal): Promise<void> {
    for (let left = this.remainingMs(); left > 0; left = this.remainingMs()) await this.#sleep(left, signal);
  }

  /**
   * Runs `work` once no pause is in progress. When it fails and a pause held requests meanwhile,
   * the pause is waited out and `work` runs again (at most `MAX_PAUSES` times): a refusal for a
   * pause is no failure of the server. Any other failure, or an abort of `signal`, stands.
   */
  async after<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let pauses = 0; ; pauses++) {
      await this.over(signal);
      const startedAt = this.clock.now();
      try {
        return await work();
      } catch (err) {
        if (signal?.aborted || pauses >= MAX_PAUSES || !this.pausedAfter(startedAt)) throw err;
      }
    }
  }

  #sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return sleep(ms, { signal, clock: this.clock });
  }
}
