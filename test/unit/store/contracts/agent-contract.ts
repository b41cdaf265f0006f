import { describe, expect, it } from 'vitest';
import type { AgentStore, StoredAgentKey } from '../../../../src/store/ports.js';

/** A fresh, empty store; the factory registers its own cleanup. */
export type MakeAgentStore = () => Promise<AgentStore>;

const key = (id: string, agent: string, createdAt = 1): StoredAgentKey => ({
  id,
  agent,
  salt: Buffer.from(`salt-${id}`),
  hash: Buffer.from(`hash-${id}`),
  createdAt,
});

/** The `AgentStore` port's contract (store/ports.ts), for every backend. */
export function describeAgentContract(name: string, make: MakeAgentStore): void {
  describe(`AgentStore contract: ${name}`, () => {
    it('keeps agents and key hashes; revoking keeps the records, marked', async () => {
      const store = await make();
      expect(await store.agents()).toEqual([]);
      await store.putAgent({ name: 'ci', settings: { servers: ['github'], access: 'read' }, createdAt: 10 });
      await store.putAgent({ name: 'ops', settings: {}, createdAt: 11 });
      await store.putKey(key('aaaa', 'ci'));
      await store.putKey(key('bbbb', 'ops'));

      await store.revokeKeys('ci', 20);
      await store.putKey(key('cccc', 'ci', 21));
      await store.revokeAgent('ops', 30);

      expect(await store.agents()).toEqual([
        { name: 'ci', settings: { servers: ['github'], access: 'read' }, createdAt: 10 },
        { name: 'ops', settings: {}, createdAt: 11, revokedAt: 30 },
      ]);
      const keys = (await store.keys()).sort((a, b) => a.id.localeCompare(b.id));
      expect(keys).toEqual([{ ...key('aaaa', 'ci'), revokedAt: 20 }, { ...key('bbbb', 'ops'), revokedAt: 30 }, key('cccc', 'ci', 21)]);
      expect(Buffer.isBuffer(keys[0]?.hash)).toBe(true);
    });

    it('lets a revoked agent be put again, fresh', async () => {
      const store = await make();
      await store.putAgent({ name: 'ci', settings: { access: 'all' }, createdAt: 1 });
      await store.revokeAgent('ci', 2);
      await store.putAgent({ name: 'ci', settings: { access: 'read' }, createdAt: 3 });
      expect(await store.agents()).toEqual([{ name: 'ci', settings: { access: 'read' }, createdAt: 3 }]);
    });
  });
}
