import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_BACKOFF, FailureWindow } from '../../../src/util/backoff.js';
import { DaemonConfigSchema } from '../../../src/config/schema.js';

describe('backoffDelay', () => {
  it('doubles from 500 ms to the 5 min cap, without jitter in the middle of the range', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, DEFAULT_BACKOFF, mid))).toEqual([500, 1000, 2000, 4000, 8000, 16000]);
    expect(backoffDelay(10, DEFAULT_BACKOFF, mid)).toBe(256_000);
    expect(backoffDelay(11, DEFAULT_BACKOFF, mid)).toBe(300_000);
    expect(backoffDelay(1000, DEFAULT_BACKOFF, mid)).toBe(300_000);
  });

  it('spreads each delay by ±20 % and never past the cap', () => {
    expect(backoffDelay(1, DEFAULT_BACKOFF, () => 0)).toBe(400);
    expect(backoffDelay(1, DEFAULT_BACKOFF, () => 1)).toBe(600);
    expect(backoffDelay(20, DEFAULT_BACKOFF, () => 1)).toBe(300_000);
  });
});

describe('FailureWindow', () => {
  it('says "too many" on the failure past the limit within the window, and forgets old ones', () => {
    const window = new FailureWindow(5, 30_000);
    expect([0, 1000, 2000, 3000, 4000].map((t) => window.record(t))).toEqual([false, false, false, false, false]);
    expect(window.record(5000)).toBe(true);
    const slow = new FailureWindow(5, 30_000);
    // One failure every 7 s never has six inside 30 s.
    expect(Array.from({ length: 20 }, (_, i) => slow.record(i * 7000)).some(Boolean)).toBe(false);
  });
});

describe('health config', () => {
  it('takes a boolean or the tuning object, and rejects nonsense', () => {
    expect(DaemonConfigSchema.parse({}).health).toBe(true);
    expect(DaemonConfigSchema.parse({ health: false }).health).toBe(false);
    expect(DaemonConfigSchema.parse({ health: { pingIntervalMs: 5000 } }).health).toEqual({ enabled: true, pingIntervalMs: 5000, pingTimeoutMs: 10_000 });
    expect(DaemonConfigSchema.safeParse({ health: { pingTimeoutMs: 0 } }).success).toBe(false);
    expect(DaemonConfigSchema.safeParse({ health: { ping: 1 } }).success).toBe(false);
    expect(DaemonConfigSchema.parse({ mcpServers: { a: { command: 'x', pingIntervalMs: 0 } } }).mcpServers.a?.pingIntervalMs).toBe(0);
  });
});
