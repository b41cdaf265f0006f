import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDeadline, linkSignal, perCallController } from '../../../src/util/abort.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('linkSignal', () => {
  it('follows the parent with its reason', () => {
    const parent = new AbortController();
    const link = linkSignal(parent.signal);
    parent.abort(new Error('shutdown'));
    expect(link.signal.aborted).toBe(true);
    expect((link.signal.reason as Error).message).toBe('shutdown');
  });

  it('puts one listener on the parent however many children are live, and none once disposed', () => {
    const parent = new AbortController();
    const links = Array.from({ length: 50 }, () => linkSignal(parent.signal));
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    for (const link of links) link.dispose();
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it('no longer follows the parent after dispose', () => {
    const parent = new AbortController();
    const link = linkSignal(parent.signal);
    const other = linkSignal(parent.signal);
    link.dispose();
    parent.abort();
    expect(link.signal.aborted).toBe(false);
    expect(other.signal.aborted).toBe(true);
  });

  it('starts aborted under an aborted parent', () => {
    const link = linkSignal(AbortSignal.abort('gone'));
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toBe('gone');
  });
  it('hands a per-call signal through: no second signal, no listener on it', () => {
    const perCall = perCallController();
    const link = linkSignal(perCall.signal);
    expect(link.signal).toBe(perCall.signal);
    expect(getEventListeners(perCall.signal, 'abort')).toHaveLength(0);
    link.dispose();
    perCall.abort('client gone');
    expect(link.signal.reason).toBe('client gone');
  });
});

describe('createDeadline', () => {
  it('aborts with a TimeoutError when the time is up', () => {
    vi.useFakeTimers();
    const deadline = createDeadline(undefined, 100);
    vi.advanceTimersByTime(99);
    expect(deadline.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(deadline.timedOut).toBe(true);
    expect((deadline.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('never fires with 0, and dispose clears the timer', () => {
    vi.useFakeTimers();
    const none = createDeadline(undefined, 0);
    const cleared = createDeadline(undefined, 50);
    cleared.dispose();
    vi.advanceTimersByTime(1_000_000);
    expect(none.signal.aborted).toBe(false);
    expect(cleared.signal.aborted).toBe(false);
  });

  it('reports a parent abort as not timed out', () => {
    const parent = new AbortController();
    const deadline = createDeadline(parent.signal, 10_000);
    parent.abort();
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.timedOut).toBe(false);
    deadline.dispose();
  });
});
