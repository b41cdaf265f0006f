/**
 * Time as the supervision code sees it: the current time and timers. Production uses the
 * system clock; tests about timing (backoff, crash windows, ping intervals) inject a manual one
 * and advance it, instead of sleeping (STYLE rule 11).
 */
export interface Clock {
  now(): number;
  /** Schedules `fn` after `ms`; the timer never keeps the process alive. */
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer | undefined): void;
}

/** An opaque timer handle. */
export interface ClockTimer {
  readonly __clockTimer?: never;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const timer = setTimeout(fn, Math.max(0, Math.min(ms, 2_147_483_647)));
    timer.unref();
    return timer as unknown as ClockTimer;
  },
  clearTimeout(timer) {
    if (timer !== undefined) clearTimeout(timer as unknown as NodeJS.Timeout);
  },
};
