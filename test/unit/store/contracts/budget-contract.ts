import { describe, expect, it } from 'vitest';
import type { BudgetStore } from '../../../../src/store/ports.js';

/** A fresh, empty store; the factory registers its own cleanup. */
export type MakeBudgetStore = () => Promise<BudgetStore>;

const NOW = Date.parse('2026-12-05T12:00:00Z');

/** The `BudgetStore` port's contract (store/access-ports.ts, issue #38), for every backend. */
export function describeBudgetContract(name: string, make: MakeBudgetStore): void {
  describe(`BudgetStore contract: ${name}`, () => {
    it('adds to each window per agent and answers the counts, 0 for a window never counted', async () => {
      const store = await make();
      expect(await store.spent('bot', ['h:1', 'd:1'])).toEqual({ 'h:1': 0, 'd:1': 0 });
      expect(await store.add('bot', ['h:1', 'd:1'], 100, NOW)).toEqual({ 'h:1': 100, 'd:1': 100 });
      expect(await store.add('bot', ['h:2', 'd:1'], 50, NOW)).toEqual({ 'h:2': 50, 'd:1': 150 });
      await store.add('other', ['h:1'], 7, NOW);
      expect(await store.spent('bot', ['h:1', 'h:2', 'd:1'])).toEqual({ 'h:1': 100, 'h:2': 50, 'd:1': 150 });
      expect(await store.spent('other', ['h:1'])).toEqual({ 'h:1': 7 });
    });

    it('counts every add of many at once', async () => {
      const store = await make();
      await Promise.all(Array.from({ length: 20 }, () => store.add('bot', ['d:1'], 3, NOW)));
      expect(await store.spent('bot', ['d:1'])).toEqual({ 'd:1': 60 });
    });
  });
}
