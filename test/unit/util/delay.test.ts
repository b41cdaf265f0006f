import { describe, expect, it } from 'vitest';
import { delay } from '../../../src/util/delay.js';

/** Node's count of timers that keep the event loop alive (unref'd ones are not listed). */
const liveTimers = (): number => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;

describe('delay', () => {
  it('keeps the process alive while it runs, so an awaited teardown wait cannot be cut short', async () => {
    const before = liveTimers();
    const stop = new AbortController();
    const waiting = delay(60_000, stop.signal);
    expect(liveTimers()).toBe(before + 1);
    stop.abort();
    await waiting;
    expect(liveTimers()).toBe(before);
  });

  it('resolves after its time', async () => {
    const started = performance.now();
    await delay(20);
    expect(performance.now() - started).toBeGreaterThanOrEqual(19);
  });
});
