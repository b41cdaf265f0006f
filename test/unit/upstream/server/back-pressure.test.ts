import { describe, expect, it } from 'vitest';
import { BackPressure } from '../../../../src/upstream/server/back-pressure.js';
import { ManualClock } from '../../../helpers/manual-clock.js';

/**
 * Issue #35 item 3: the pause a server asked for, on the manual clock — `over` waits until it
 * ends (an extension included), `after` runs work only then and sits out a pause that began
 * under it instead of letting it fail.
 */

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Whether `promise` has settled, observed without awaiting it. */
function watch(promise: Promise<unknown>): { readonly done: boolean; readonly failed: unknown } {
  const state = { done: false, failed: undefined as unknown };
  promise.then(
    () => (state.done = true),
    (err: unknown) => ((state.done = true), (state.failed = err)),
  );
  return state;
}

describe('BackPressure.over', () => {
  it('resolves at once without a pause, else once the pause is over, an extension included', async () => {
    const clock = new ManualClock(0);
    const pause = new BackPressure(clock);
    await pause.over();
    expect(clock.pendingDelays()).toEqual([]);

    pause.pause(2_000);
    const waiting = watch(pause.over());
    clock.advance(1_000);
    // Asked for more while it waits: it waits for that too.
    pause.pause(3_000);
    clock.advance(1_000);
    await flush();
    expect(waiting.done).toBe(false);
    expect(pause.remainingMs()).toBe(2_000);
    clock.advance(1_999);
    await flush();
    expect(waiting.done).toBe(false);
    clock.advance(1);
    await flush();
    expect(waiting.done).toBe(true);
    expect(clock.pendingDelays()).toEqual([]);
  });

  it('ends the wait with the signal reason on abort, and leaves no timer', async () => {
    const clock = new ManualClock(0);
    const pause = new BackPressure(clock);
    pause.pause(2_000);
    const controller = new AbortController();
    const waiting = pause.over(controller.signal);
    controller.abort(new Error('caller left'));
    await expect(waiting).rejects.toThrow('caller left');
    expect(clock.pendingDelays()).toEqual([]);
  });

  it('keeps a pause over a reload (continueFrom), and tells whether one held requests after a moment', () => {
    const clock = new ManualClock(1_000);
    const old = new BackPressure(clock);
    old.pause(2_000);
    const next = new BackPressure(clock);
    next.continueFrom(old);
    expect(next.until).toBe(3_000);
    expect(next.pausedAfter(2_999)).toBe(true);
    expect(next.pausedAfter(3_000)).toBe(false);
  });
});

describe('BackPressure.after', () => {
  it('runs the work only once the pause is over', async () => {
    const clock = new ManualClock(0);
    const pause = new BackPressure(clock);
    pause.pause(2_000);
    let runs = 0;
    const result = pause.after(async () => ++runs);
    clock.advance(1_999);
    await flush();
    expect(runs).toBe(0);
    clock.advance(1);
    await expect(result).resolves.toBe(1);
  });

  it('sits out a pause the work itself was refused for, then runs it again', async () => {
    const clock = new ManualClock(0);
    const pause = new BackPressure(clock);
    const starts: number[] = [];
    const result = pause.after(async () => {
      starts.push(clock.now());
      if (starts.length === 1) {
        // What the transport does with a 429 + Retry-After: 2, before the request fails.
        pause.pause(2_000);
        throw new Error('HTTP 429');
      }
      return 'listed';
    });
    await flush();
    expect(starts).toEqual([0]);
    clock.advance(2_000);
    await expect(result).resolves.toBe('listed');
    expect(starts).toEqual([0, 2_000]);
  });

  it('lets any other failure stand, and one that keeps being refused after five pauses', async () => {
    const clock = new ManualClock(0);
    const pause = new BackPressure(clock);
    await expect(pause.after(() => Promise.reject(new Error('broken')))).rejects.toThrow('broken');

    let runs = 0;
    const result = watch(
      pause.after(async () => {
        runs += 1;
        pause.pause(1_000);
        throw new Error(`HTTP 429 #${runs}`);
      }),
    );
    for (let i = 0; i < 5; i++) {
      await flush();
      clock.advance(1_000);
    }
    await flush();
    expect(runs).toBe(6);
    expect(result.done).toBe(true);
    expect((result.failed as Error).message).toBe('HTTP 429 #6');
  });

  it('ends with the abort, not a retry, when its signal aborts', async () => {
    const clock = new ManualClock(0);
    const pause = new BackPressure(clock);
    pause.pause(1_000);
    const controller = new AbortController();
    let runs = 0;
    const result = pause.after(async () => ++runs, controller.signal);
    controller.abort(new Error('stopped'));
    await expect(result).rejects.toThrow('stopped');
    expect(runs).toBe(0);
  });
});
