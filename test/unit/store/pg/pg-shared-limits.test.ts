import { describe, expect, it, onTestFinished } from 'vitest';
import { cutOff, freshDatabaseUrl, postgresStores } from '../../../helpers/pg-stores.js';
import { spyLogger } from '../store-helpers.js';

/**
 * Issue #43 item 1 at the store: the rate buckets every replica takes from, and budgets that stay
 * spent while the database is away.
 */
describe('the PostgreSQL store: limits for the cluster', () => {
  it('two pools take from one agent bucket: the capacity in all, refilled by the time since, a changed setting starts full', async () => {
    const url = await freshDatabaseUrl();
    const [a, b] = [await postgresStores({ url }), await postgresStores({ url })];
    const perMs = 1 / 1_000;
    const takes = [];
    for (let i = 0; i < 6; i += 1) takes.push(await (i % 2 === 0 ? a : b).rateLimits!.take('bot', 's1', 4, perMs, 10_000));
    expect(takes.map((t) => t?.taken)).toEqual([true, true, true, true, false, false]);
    // Two seconds on: two tokens, whichever pool asks; a clock behind the row's refills nothing.
    expect(await b.rateLimits!.take('bot', 's1', 4, perMs, 12_000)).toMatchObject({ taken: true, tokens: 1 });
    expect(await a.rateLimits!.take('bot', 's1', 4, perMs, 11_000)).toMatchObject({ taken: true, tokens: 0 });
    expect(await a.rateLimits!.take('bot', 's1', 4, perMs, 12_000)).toMatchObject({ taken: false });
    expect(await a.rateLimits!.take('bot', 's2', 4, perMs, 12_000)).toMatchObject({ taken: true, tokens: 3 });
  });

  it('with the database away a take answers nothing (the replica limits itself) and a spent budget stays spent', async () => {
    const url = await freshDatabaseUrl();
    const stores = await postgresStores({ url, logger: spyLogger(), probeIntervalMs: 100, connectTimeoutMs: 1000 });
    const windows = ['h:2026-12-05T15'];
    await stores.budgets!.add('bot', windows, 500, 1);
    expect(await stores.budgets!.spent('bot', windows)).toEqual({ 'h:2026-12-05T15': 500 });

    const outage = await cutOff(url);
    onTestFinished(() => outage.restore());
    expect(await stores.rateLimits!.take('bot', 's', 4, 1, 1)).toBeUndefined();
    expect(await stores.budgets!.spent('bot', windows)).toEqual({ 'h:2026-12-05T15': 500 });
    await stores.budgets!.add('bot', windows, 20, 2);
    expect(await stores.budgets!.spent('bot', windows)).toEqual({ 'h:2026-12-05T15': 520 });
    await outage.restore();
  });
});
