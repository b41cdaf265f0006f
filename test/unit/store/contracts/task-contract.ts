import { describe, expect, it } from 'vitest';
import type { TaskStore } from '../../../../src/store/task-store.js';

/** A fresh, empty store; the factory registers its own cleanup. */
export type MakeTaskStore = () => Promise<TaskStore>;

const NOW = Date.parse('2026-12-05T12:00:00Z');

/** The `TaskStore` port's contract (store/task-store.ts, issue #41), for every backend. */
export function describeTaskContract(name: string, make: MakeTaskStore): void {
  describe(`TaskStore contract: ${name}`, () => {
    it('answers the last document put under an id until it expires, and nothing for an unknown id', async () => {
      const store = await make();
      expect(await store.get('t1', NOW)).toBeUndefined();
      await store.put('t1', '{"status":"working"}', NOW + 1_000, NOW);
      await store.put('t1', '{"status":"completed"}', NOW + 2_000, NOW + 500);
      await store.put('t2', '{"status":"working"}', NOW + 1_000, NOW);
      expect(await store.get('t1', NOW + 1_500)).toBe('{"status":"completed"}');
      expect(await store.get('t2', NOW + 999)).toBe('{"status":"working"}');
      expect(await store.get('t2', NOW + 1_000)).toBeUndefined();
      expect(await store.get('t1', NOW + 2_000)).toBeUndefined();
    });
  });
}
