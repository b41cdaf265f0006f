import { describe, expect, it } from 'vitest';
import { AdaptiveLimit, DEFAULT_ADAPTIVE, FixedLimit, type LimitSample } from '../../../../src/upstream/server/adaptive-limit.js';
import { seeded } from './simulated-server.js';

/**
 * Issue #35 item 1: the adaptive limit on its own, fed answers as the call gate would — how long
 * each took and how many were in flight when it started. The gate and the limit together, against
 * simulated servers on the manual clock, are in call-gate.test.ts.
 */

/** Feeds `limit` answers from a server whose latency at `n` in flight is `latency(n)`, each at the limit in force. */
function feed(limit: AdaptiveLimit, answers: number, latency: (inFlight: number) => number, saturated = true): number[] {
  const seen: number[] = [];
  for (let i = 0; i < answers; i++) {
    const inFlight = limit.value;
    limit.observe({ latencyMs: latency(inFlight), inFlight, saturated }, 1_000 + i);
    seen.push(limit.value);
  }
  return seen;
}

describe('AdaptiveLimit', () => {
  it('starts at 16 and grows by one per answer while requests wait, until it has enough answers to fit', () => {
    const limit = new AdaptiveLimit();
    expect(limit).toMatchObject({ mode: 'adaptive', value: 16, changedAt: undefined, reason: 'adaptive: starts at 16, before any answer' });
    limit.observe({ latencyMs: 100, inFlight: 16, saturated: true }, 5_000);
    expect(limit).toMatchObject({ value: 17, changedAt: 5_000, reason: 'grew: requests waited (too few answers yet to see a rise)' });
    // Nobody waited and a slot was free: more room would not have been used.
    limit.observe({ latencyMs: 100, inFlight: 3, saturated: false }, 6_000);
    expect(limit).toMatchObject({ value: 17, changedAt: 5_000 });
  });

  it('grows up to doubling per answer once the fit vouches that latency does not rise, whatever the calls take', () => {
    const random = seeded(7);
    const limit = new AdaptiveLimit();
    // Calls of 0.5–6 s, their length unrelated to how many run at once.
    const seen = feed(limit, 60, () => 500 + random() * 5_500);
    expect(seen.every((value, i) => i === 0 || value >= (seen[i - 1] as number))).toBe(true);
    expect(seen.at(-1)).toBeGreaterThanOrEqual(200);
    const steps = seen.map((value, i) => value / (i === 0 ? 16 : (seen[i - 1] as number)));
    expect(Math.max(...steps)).toBeLessThanOrEqual(2);
    expect(limit.reason).toBe('grew: requests waited and latency does not rise with concurrency');
  });

  it('shrinks a server whose latency rises with concurrency, at most halving per answer, to where a call takes 3× one alone', () => {
    const limit = new AdaptiveLimit();
    // One call at a time, 100 ms each: a call that starts with n in flight takes n × 100 ms.
    const seen = feed(limit, 40, (n) => 100 * n);
    const drops = seen.map((value, i) => [i === 0 ? 16 : (seen[i - 1] as number), value] as const).filter(([before, after]) => after < before);
    expect(drops.length).toBeGreaterThan(0);
    for (const [before, after] of drops) expect(after).toBeGreaterThanOrEqual(Math.floor(before / 2));
    expect(seen.slice(-20).every((value) => value >= 2 && value <= 3)).toBe(true);
    expect(limit.reason).toMatch(
      /^shrank: latency rises with concurrency \(\+100 ms per request in flight\); at \d+ in flight one would take \d+ ms, more than 3× the 100 ms it takes alone$/,
    );
  });

  it('keeps a one-at-a-time server at 3 or 4 under steady load, and never above', () => {
    const limit = new AdaptiveLimit();
    const seen = feed(limit, 400, (n) => 2 + 50 * n);
    expect(Math.max(...seen.slice(20))).toBeLessThanOrEqual(4);
    expect(Math.min(...seen.slice(20))).toBeGreaterThanOrEqual(3);
  });

  it('does not shrink on noise: latency spread wide but not with concurrency', () => {
    const random = seeded(11);
    const limit = new AdaptiveLimit();
    // In flight wandering 20–60, latency 0.2–2 s whatever it is.
    for (let i = 0; i < 500; i++) limit.observe({ latencyMs: 200 + random() * 1_800, inFlight: 20 + Math.floor(random() * 40), saturated: false }, i);
    expect(limit.value).toBe(16);
    expect(limit.changedAt).toBeUndefined();
  });

  it('never goes below its floor or above its ceiling', () => {
    // Steeper than one at a time (the line's intercept is below zero): the line asks for less than 1.
    const steep = new AdaptiveLimit();
    expect(feed(steep, 60, (n) => 1_000 * n - 900).slice(-10)).toEqual(Array(10).fill(1));
    const floored = new AdaptiveLimit({ ...DEFAULT_ADAPTIVE, floor: 4 });
    expect(Math.min(...feed(floored, 60, (n) => 1_000 * n - 900))).toBe(4);

    const capped = new AdaptiveLimit({ ...DEFAULT_ADAPTIVE, ceiling: 40 });
    const seen = feed(capped, 100, () => 300);
    expect(Math.max(...seen)).toBe(40);
    expect(seen.at(-1)).toBe(40);
    expect(new AdaptiveLimit({ ...DEFAULT_ADAPTIVE, initial: 5_000 }).value).toBe(1_000);
  });

  it('learns nothing from answers while the server is idle, so an idle server keeps its limit', () => {
    const limit = new AdaptiveLimit();
    feed(limit, 30, (n) => 100 * n);
    const settled = limit.value;
    const idle: LimitSample = { latencyMs: 100, inFlight: 1, saturated: false };
    for (let i = 0; i < 50; i++) limit.observe(idle, 10_000 + i);
    expect(limit.value).toBe(settled);
  });
});

describe('FixedLimit', () => {
  it('is pinned by maxConcurrentCalls: answers change nothing', () => {
    const limit = new FixedLimit(4);
    for (let i = 0; i < 50; i++) limit.observe();
    expect(limit).toMatchObject({ mode: 'fixed', value: 4, reason: 'pinned by maxConcurrentCalls 4', changedAt: undefined });
  });
});
