import { describe, expect, it } from 'vitest';
import type { SwitchboardError } from '../../../../src/errors.js';
import { AgentLimiter } from '../../../../src/gateway/agents/agent-limits.js';

function refusal(fn: () => unknown): SwitchboardError {
  try {
    fn();
  } catch (error) {
    return error as SwitchboardError;
  }
  throw new Error('expected a refusal');
}

describe('agent limiter', () => {
  it('a token bucket: burst at once, then one per refill interval, with the wait to retry', () => {
    let now = 0;
    const limiter = new AgentLimiter(() => now);
    const settings = { rateLimit: { perMinute: 60, burst: 2 } };
    limiter.enter('a', settings).release();
    limiter.enter('a', settings).release();
    const error = refusal(() => limiter.enter('a', settings));
    expect(error.code).toBe('AGENT_RATE_LIMITED');
    expect(error.status).toBe(429);
    expect(error.retryAfterMs).toBe(1_000);
    now = 1_000;
    limiter.enter('a', settings).release();
    // another agent has its own bucket
    limiter.enter('b', settings).release();
  });

  it('a concurrency cap: refused while full, free again after a release (once)', () => {
    const limiter = new AgentLimiter(() => 0);
    const settings = { maxConcurrentCalls: 1 };
    const slot = limiter.enter('a', settings);
    expect(refusal(() => limiter.enter('a', settings)).code).toBe('AGENT_BUSY');
    slot.release();
    slot.release();
    const again = limiter.enter('a', settings);
    expect(refusal(() => limiter.enter('a', settings)).code).toBe('AGENT_BUSY');
    again.release();
  });

  it('no limits configured: nothing is counted', () => {
    const limiter = new AgentLimiter(() => 0);
    for (let i = 0; i < 1000; i++) limiter.enter('a', {});
  });
});
