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

    it("lists an agent's documents not yet expired, and no one else's (a 2025-11-25 tasks/list)", async () => {
      const store = await make();
      expect(await store.list('alice', NOW)).toEqual([]);
      await store.put('a1', '{"agent":"alice","taskId":"a1"}', NOW + 1_000, NOW);
      await store.put('a2', '{"agent":"alice","taskId":"a2"}', NOW + 5_000, NOW);
      await store.put('b1', '{"agent":"bob","taskId":"b1"}', NOW + 5_000, NOW);
      await store.put('n1', '{"agent":"","taskId":"n1"}', NOW + 5_000, NOW);
      expect((await store.list('alice', NOW)).sort()).toEqual(['{"agent":"alice","taskId":"a1"}', '{"agent":"alice","taskId":"a2"}']);
      expect(await store.list('alice', NOW + 1_000)).toEqual(['{"agent":"alice","taskId":"a2"}']);
      expect(await store.list('bob', NOW)).toEqual(['{"agent":"bob","taskId":"b1"}']);
      expect(await store.list('', NOW)).toEqual(['{"agent":"","taskId":"n1"}']);
    });
  });
}
