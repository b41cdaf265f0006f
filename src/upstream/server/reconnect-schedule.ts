import { backoffDelay, FailureWindow } from '../../util/backoff.js';
import type { Clock, ClockTimer } from '../../util/clock.js';
import type { HealthSettings } from './upstream-host.js';

/** What a lost connection leads to. */
export type AfterLoss = { kind: 'stay-down' } | { kind: 'suspend'; crashes: number } | { kind: 'reconnect' };

/**
 * When a lost server is tried again (SPEC §6): the crash window that suspends a crash loop, the
 * backoff with jitter, the one retry timer (on the injected clock), and the attempt it is at.
 */
export class ReconnectSchedule {
  #attempt = 0;
  #nextRetryAt: number | undefined;
  #timer: ClockTimer | undefined;
  readonly #crashes: FailureWindow;

  constructor(
    private readonly health: HealthSettings,
    private readonly clock: Clock,
    private readonly random: () => number,
  ) {
    this.#crashes = new FailureWindow(health.crashLimit, health.crashWindowMs);
  }

  /** The attempt scheduled or running; 0 when none. */
  get attempt(): number {
    return this.#attempt;
  }

  get nextRetryAt(): number | undefined {
    return this.#nextRetryAt;
  }

  /** Decides after a loss; a crash counts towards suspension. */
  afterLoss(crash: boolean): AfterLoss {
    if (!this.health.enabled) return { kind: 'stay-down' };
    if (crash && this.#crashes.record(this.clock.now())) return { kind: 'suspend', crashes: this.#crashes.count };
    return { kind: 'reconnect' };
  }

  /** Schedules the next attempt: after `delayMs`, else after the backoff for its number. */
  schedule(run: () => void, delayMs?: number): void {
    this.#attempt += 1;
    const delay = delayMs ?? backoffDelay(this.#attempt, this.health.backoff, this.random);
    this.#nextRetryAt = this.clock.now() + delay;
    this.#timer = this.clock.setTimeout(() => {
      this.#timer = undefined;
      this.#nextRetryAt = undefined;
      run();
    }, delay);
  }

  /** Nothing scheduled any more (connected, stopped, waiting for a person). */
  reset(): void {
    this.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#attempt = 0;
    this.#nextRetryAt = undefined;
  }
}
