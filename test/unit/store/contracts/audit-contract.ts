import { describe, expect, it } from 'vitest';
import type { AuditEntry, AuditStore } from '../../../../src/store/ports.js';

/** A fresh, empty store; the factory registers its own cleanup. */
export type MakeAuditStore = () => Promise<AuditStore>;

const entry = (ts: number, name: string, extra: Partial<AuditEntry> = {}): AuditEntry => ({
  ts,
  transport: 'rest',
  server: 'echo',
  kind: 'tools/call',
  name,
  outcome: 'ok',
  durationMs: 1.5,
  argBytes: 2,
  resultBytes: 3,
  ...extra,
});

/** The `AuditStore` port's contract (store/access-ports.ts), for every backend. */
export function describeAuditContract(name: string, make: MakeAuditStore): void {
  describe(`AuditStore contract: ${name}`, () => {
    it('filters by agent, server, name, outcome and since, newest first, up to the limit', async () => {
      const store = await make();
      await store.append([
        entry(1000, 'a', { agent: 'ci', arguments: '{"q":"***"}' }),
        entry(2000, 'b', { server: 'other', outcome: 'error', code: 'UPSTREAM_ERROR', transport: 'mcp' }),
        entry(3000, 'c', { agent: 'ci', kind: 'resources/read', runId: 'run-1' }),
      ]);
      const names = async (query: Parameters<typeof store.query>[0]) => (await store.query(query)).map((row) => row.name);
      expect(await names({ limit: 10 })).toEqual(['c', 'b', 'a']);
      expect(await names({ limit: 10, agent: 'ci' })).toEqual(['c', 'a']);
      expect(await names({ limit: 10, server: 'other' })).toEqual(['b']);
      expect(await names({ limit: 10, name: 'a' })).toEqual(['a']);
      expect(await names({ limit: 10, outcome: 'error' })).toEqual(['b']);
      expect(await names({ limit: 10, since: 2000 })).toEqual(['c', 'b']);
      expect(await names({ limit: 1 })).toEqual(['c']);
      // A code-mode run's calls (issue #39).
      expect(await store.query({ limit: 10, runId: 'run-1' })).toEqual([{ ...entry(3000, 'c', { agent: 'ci', kind: 'resources/read', runId: 'run-1' }), id: expect.any(Number) }]);
      const [b] = await store.query({ limit: 1, outcome: 'error' });
      expect(b).toEqual({ ...entry(2000, 'b', { server: 'other', outcome: 'error', code: 'UPSTREAM_ERROR', transport: 'mcp' }), id: expect.any(Number) });
      const [a] = await store.query({ limit: 1, name: 'a' });
      expect(a).toEqual({ ...entry(1000, 'a', { agent: 'ci', arguments: '{"q":"***"}' }), id: expect.any(Number) });
    });

    it('trims by age, then to the newest maxRows, and says how many went', async () => {
      const store = await make();
      await store.append([1, 2, 3, 4, 5, 6].map((i) => entry(i * 1000, `call-${i}`)));
      expect(await store.trim(2500, 100)).toBe(2);
      expect(await store.trim(0, 3)).toBe(1);
      expect((await store.query({ limit: 10 })).map((row) => row.name)).toEqual(['call-6', 'call-5', 'call-4']);
      expect(await store.trim(0, 3)).toBe(0);
    });

    it('applies batches in the order they were called, awaited or not', async () => {
      const store = await make();
      const writes = [store.append([entry(1, 'first')]), store.append([entry(2, 'second'), entry(3, 'third')])];
      const read = store.query({ limit: 10 });
      await Promise.all(writes);
      expect((await read).map((row) => row.name)).toEqual(['third', 'second', 'first']);
    });

    it('after close, reads are empty and writes are dropped without rejecting', async () => {
      const store = await make();
      await store.append([entry(1, 'kept')]);
      await store.close();
      await expect(store.append([entry(2, 'dropped')])).resolves.toBeUndefined();
      expect(await store.query({ limit: 10 })).toEqual([]);
      await expect(store.close()).resolves.toBeUndefined();
    });
  });
}
