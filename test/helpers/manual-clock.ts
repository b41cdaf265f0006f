import type { Clock, ClockTimer } from '../../src/util/clock.js';

interface Pending {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock that moves only when the test says so: `advance(ms)` runs the timers that fall due,
 * in order. For tests about backoff, crash windows and other schedules (STYLE rule 11): they
 * assert the schedule exactly, and never sleep through it.
 */
export class ManualClock implements Clock {
  private time: number;
  private seq = 0;
  private readonly timers = new Map<ClockTimer, Pending>();

  constructor(start = Date.now()) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    const handle: ClockTimer = {};
    this.timers.set(handle, { at: this.time + Math.max(0, ms), seq: this.seq++, fn });
    return handle;
  }

  clearTimeout(timer: ClockTimer | undefined): void {
    if (timer) this.timers.delete(timer);
  }

  /** Delays of the timers pending now, soonest first. */
  pendingDelays(): number[] {
    return [...this.timers.values()].map((t) => t.at - this.time).sort((a, b) => a - b);
  }

  /** Moves time forward by `ms`, running every timer that falls due on the way. */
  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      let next: [ClockTimer, Pending] | undefined;
      for (const entry of this.timers) {
        if (entry[1].at > target) continue;
        if (!next || entry[1].at < next[1].at || (entry[1].at === next[1].at && entry[1].seq < next[1].seq)) next = entry;
      }
      if (!next) break;
      this.timers.delete(next[0]);
      this.time = next[1].at;
      next[1].fn();
    }
    this.time = target;
  }
}
