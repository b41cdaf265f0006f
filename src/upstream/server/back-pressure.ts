import type { Clock } from '../../util/clock.js';

/**
 * The pause an HTTP upstream asked for with `429`/`503` and `Retry-After` (issue #26 item 2): no
 * request goes to it before `until`. Only ever extended, never shortened, by a later answer.
 * Not a failure of the server: its status stays, and nothing counts toward suspension.
 */
export class BackPressure {
  #until = 0;

  constructor(private readonly clock: Clock) {}

  /** The server asked for `ms` without requests. */
  pause(ms: number): void {
    this.#until = Math.max(this.#until, this.clock.now() + ms);
  }

  /** How long requests must still hold off; 0 when they may go. */
  remainingMs(): number {
    return this.#until === 0 ? 0 : Math.max(0, this.#until - this.clock.now());
  }

  /** The end of the pause in progress, for `GET /servers/:name`; undefined when none. */
  get until(): number | undefined {
    return this.remainingMs() > 0 ? this.#until : undefined;
  }
}
