import { describe, expect, it } from 'vitest';
import { AgentBudgets } from '../../../../../src/gateway/agents/agent-budgets.js';
import { compose, contextOf } from '../../../../../src/gateway/requests/pipeline.js';
import { budget } from '../../../../../src/gateway/requests/stages/budget.js';
import { MemoryBudgetStore } from '../../../../../src/store/budget-store.js';
import { ManualClock } from '../../../../helpers/manual-clock.js';

const ANSWER = { content: [{ type: 'text', text: 'x '.repeat(2_000) }] };

function budgeted(limits: { tokensPerHour?: number; tokensPerDay?: number }) {
  const clock = new ManualClock(Date.parse('2026-12-05T12:59:00Z'));
  const budgets = new AgentBudgets(new MemoryBudgetStore(), clock, (name) => (name === 'bot' ? limits : undefined));
  let reached = 0;
  const run = compose([budget(budgets)], async () => {
    reached += 1;
    return ANSWER;
  });
  const call = (agent?: string, method: 'tools/call' | 'completion/complete' = 'tools/call') =>
    run(contextOf(method === 'tools/call' ? { method, name: 't' } : { method, params: {} }, { transport: 'rest', ...(agent ? { agent: { name: agent } } : {}) }));
  return { clock, budgets, call, reached: () => reached };
}

describe("budget: an agent's tokens per hour and per day, refused when spent, counted as handed", () => {
  it('counts each answer and refuses once the hour is spent, until the hour turns (retryAfterMs to the minute)', async () => {
    const { call, clock, budgets, reached } = budgeted({ tokensPerHour: 2_500 });
    await call('bot');
    await call('bot');
    expect((await budgets.status('bot'))?.hour).toMatchObject({ limit: 2_500, left: 0, resetsAt: '2026-12-05T13:00:00.000Z' });
    await expect(call('bot')).rejects.toMatchObject({
      code: 'BUDGET_EXCEEDED',
      retryAfterMs: 60_000,
      message: expect.stringContaining('2500 tokens per hour; it resets at 2026-12-05T13:00:00.000Z'),
    });
    expect(reached()).toBe(2);
    clock.advance(60_000);
    await expect(call('bot')).resolves.toBe(ANSWER);
  });

  it("refuses on the day's budget until midnight UTC even when the hour turns", async () => {
    const { call, clock } = budgeted({ tokensPerHour: 100_000, tokensPerDay: 1_000 });
    await call('bot');
    clock.advance(60_000);
    await expect(call('bot')).rejects.toMatchObject({ code: 'BUDGET_EXCEEDED', retryAfterMs: 11 * 60 * 60_000 });
  });

  it('leaves the operator, agents without a budget and uncounted kinds alone', async () => {
    const { call, budgets, reached } = budgeted({ tokensPerHour: 1 });
    await call();
    await call('other');
    await call('bot', 'completion/complete');
    expect(reached()).toBe(3);
    expect(budgets.known()).toEqual([]);
  });
});
