import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { deferred } from '../../../src/util/deferred.js';
import { sleep, waitFor } from '../../../src/util/wait-for.js';
import { ManualClock } from '../../helpers/manual-clock.js';

type State<T> = { settled: false } | { settled: true; value?: T; error?: unknown };

/** Watches `promise` without awaiting it; `flush()` lets every pending reaction run. */
function watch<T>(promise: Promise<T>): State<T> {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return state as State<T>;
}
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const listeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;

describe('waitFor', () => {
  it('settles like the promise, and leaves no timer and no listener behind', async () => {
    const clock = new ManualClock(0);
    const parent = new AbortController();
    const work = deferred<string>();
    const waiting = waitFor(work.promise, { signal: parent.signal, deadlineMs: 1_000, clock });
    expect(clock.pendingDelays()).toEqual([1_000]);
    expect(listeners(parent.signal)).toBe(1);
    work.resolve('done');
    await expect(waiting).resolves.toBe('done');
    expect(clock.pendingDelays()).toEqual([]);
    expect(listeners(parent.signal)).toBe(0);

    const failing = deferred<string>();
    const rejected = waitFor(failing.promise, { signal: parent.signal, deadlineMs: 1_000, clock });
    failing.reject(new Error('boom'));
    await expect(rejected).rejects.toThrow('boom');
    expect(clock.pendingDelays()).toEqual([]);
    expect(listeners(parent.signal)).toBe(0);
  });

  it('rejects with the signal’s reason when it aborts first, and clears the deadline', async () => {
    const clock = new ManualClock(0);
    const parent = new AbortController();
    const work = deferred<string>();
    const state = watch(waitFor(work.promise, { signal: parent.signal, deadlineMs: 1_000, clock }));
    await flush();
    expect(state.settled).toBe(false);
    const reason = new Error('client gone');
    parent.abort(reason);
    await flush();
    expect(state).toEqual({ settled: true, error: reason });
    expect(clock.pendingDelays()).toEqual([]);
    expect(listeners(parent.signal)).toBe(0);
    // The work it stopped waiting for may still fail: nobody is left to be told.
    work.reject(new Error('late'));
    await flush();
  });

  it('rejects at once under a signal already aborted, and sets no timer', async () => {
    const clock = new ManualClock(0);
    const work = deferred<string>();
    const waiting = waitFor(work.promise, { signal: AbortSignal.abort('shutting down'), deadlineMs: 1_000, clock });
    await expect(waiting).rejects.toBe('shutting down');
    expect(clock.pendingDelays()).toEqual([]);
    // Its later rejection is handled (an unhandled one would fail the run).
    work.reject(new Error('late'));
    await flush();
  });

  it('ends at the deadline by the injected clock, not a moment before', async () => {
    const clock = new ManualClock(0);
    const parent = new AbortController();
    const state = watch(waitFor(deferred<string>().promise, { signal: parent.signal, deadlineMs: 500, clock }));
    clock.advance(499);
    await flush();
    expect(state.settled).toBe(false);
    clock.advance(1);
    await flush();
    expect(state).toEqual({ settled: true, value: undefined });
    expect(listeners(parent.signal)).toBe(0);
  });

  it('resolves with onDeadline’s value, or rejects with what it throws', async () => {
    const clock = new ManualClock(0);
    const value = waitFor(deferred<boolean>().promise, { deadlineMs: 100, clock, onDeadline: () => false });
    const error = new Error('timed out');
    const thrown = waitFor(deferred<boolean>().promise, {
      deadlineMs: 100,
      clock,
      onDeadline: () => {
        throw error;
      },
    });
    clock.advance(100);
    await expect(value).resolves.toBe(false);
    await expect(thrown).rejects.toBe(error);
  });

  it('with a deadline of 0 lets a settled promise win, and otherwise ends on the clock’s next turn', async () => {
    const clock = new ManualClock(0);
    const settled = watch(waitFor(Promise.resolve('ready'), { deadlineMs: 0, clock, onDeadline: () => 'late' }));
    await flush();
    clock.advance(0);
    await flush();
    expect(settled).toEqual({ settled: true, value: 'ready' });

    const pending = watch(waitFor(deferred<string>().promise, { deadlineMs: 0, clock, onDeadline: () => 'late' }));
    await flush();
    expect(pending.settled).toBe(false);
    clock.advance(0);
    await flush();
    expect(pending).toEqual({ settled: true, value: 'late' });
  });

  it('without deadlineMs sets no timer at all', async () => {
    const clock = new ManualClock(0);
    const work = deferred<number>();
    const waiting = waitFor(work.promise, { clock });
    expect(clock.pendingDelays()).toEqual([]);
    work.resolve(7);
    await expect(waiting).resolves.toBe(7);
  });

  it('holds one listener on a long-lived signal however many waits are in flight, and none once they end (real AbortController, system clock)', async () => {
    const daemon = new AbortController();
    const works = Array.from({ length: 50 }, () => deferred<number>());
    const waits = works.map((work) => waitFor(work.promise, { signal: daemon.signal, deadlineMs: 60_000 }));
    expect(listeners(daemon.signal)).toBe(1);
    works.forEach((work, i) => work.resolve(i));
    await expect(Promise.all(waits)).resolves.toHaveLength(50);
    expect(listeners(daemon.signal)).toBe(0);
    // Sequential waits, as a daemon does all day, never pile up either.
    for (let i = 0; i < 50; i++) await waitFor(Promise.resolve(i), { signal: daemon.signal, deadlineMs: 60_000 });
    expect(listeners(daemon.signal)).toBe(0);

    const last = Array.from({ length: 20 }, () => waitFor(deferred<number>().promise, { signal: daemon.signal, deadlineMs: 60_000 }));
    daemon.abort(new Error('shutdown'));
    for (const wait of last) await expect(wait).rejects.toThrow('shutdown');
    expect(listeners(daemon.signal)).toBe(0);
  });
});

describe('sleep', () => {
  it('resolves once its time has passed on the clock, not before, and leaves no timer or listener', async () => {
    const clock = new ManualClock(0);
    const parent = new AbortController();
    const state = watch(sleep(500, { signal: parent.signal, clock }));
    expect(clock.pendingDelays()).toEqual([500]);
    clock.advance(499);
    await flush();
    expect(state.settled).toBe(false);
    clock.advance(1);
    await flush();
    expect(state).toEqual({ settled: true, value: undefined });
    expect(clock.pendingDelays()).toEqual([]);
    expect(listeners(parent.signal)).toBe(0);
  });

  it("rejects with the signal's reason when it aborts first, and clears its timer", async () => {
    const clock = new ManualClock(0);
    const parent = new AbortController();
    const sleeping = sleep(500, { signal: parent.signal, clock });
    parent.abort(new Error('gone'));
    await expect(sleeping).rejects.toThrow('gone');
    expect(clock.pendingDelays()).toEqual([]);
    await expect(sleep(500, { signal: parent.signal, clock })).rejects.toThrow('gone');
  });
});
