import { describe, expect, it } from 'vitest';
import { CACHE_FORMAT_VERSION, CACHE_MAX_AGE_MS, type ToolCacheStore } from '../../../../src/store/ports.js';
import { HASH, TOOLS } from '../cache-fixtures.js';

/** What the contract hands a backend: the clock its timestamps and expiry must read. */
export interface ContractClock {
  now: () => number;
}

/** A fresh, empty store on that clock; the factory registers its own cleanup. */
export type MakeToolCache = (clock: ContractClock) => Promise<ToolCacheStore>;

const T0 = Date.UTC(2026, 0, 1);
const OTHER_HASH = 'b'.repeat(64);

/**
 * The `ToolCacheStore` port's contract (store/ports.ts), for every backend: a backend passes
 * when `describeToolCacheContract('its name', make)` does.
 */
export function describeToolCacheContract(name: string, make: MakeToolCache): void {
  describe(`ToolCacheStore contract: ${name}`, () => {
    async function setup() {
      const clock = { at: T0 };
      const store = await make({ now: () => clock.at });
      return { store, clock };
    }

    it('returns what was put, with its hash, version, time and hints', async () => {
      const { store } = await setup();
      await store.put('echo', HASH, TOOLS);
      expect(await store.get('echo', HASH)).toEqual({ server: 'echo', configHash: HASH, formatVersion: CACHE_FORMAT_VERSION, tools: TOOLS, cachedAt: T0 });
      await store.put('hinted', HASH, TOOLS, { ttlMs: 5000, cacheScope: 'private' });
      expect((await store.get('hinted', HASH))?.hints).toEqual({ ttlMs: 5000, cacheScope: 'private' });
      expect(await store.get('other', HASH)).toBeUndefined();
    });

    it('misses for another config hash', async () => {
      const { store } = await setup();
      await store.put('echo', HASH, TOOLS);
      expect(await store.get('echo', OTHER_HASH)).toBeUndefined();
    });

    it('misses once the list is older than 30 days', async () => {
      const { store, clock } = await setup();
      await store.put('echo', HASH, TOOLS);
      clock.at = T0 + CACHE_MAX_AGE_MS;
      expect(await store.get('echo', HASH)).toBeDefined();
      clock.at = T0 + CACHE_MAX_AGE_MS + 1;
      expect(await store.get('echo', HASH)).toBeUndefined();
    });

    it('keeps no empty list: putting one removes the earlier list', async () => {
      const { store } = await setup();
      await store.put('echo', HASH, TOOLS);
      await store.put('echo', HASH, []);
      expect(await store.get('echo', HASH)).toBeUndefined();
    });

    it('replaces a server list and deletes one server only', async () => {
      const { store } = await setup();
      await store.put('a', HASH, TOOLS);
      await store.put('b', HASH, TOOLS);
      await store.put('a', OTHER_HASH, TOOLS.slice(0, 1));
      expect(await store.get('a', HASH)).toBeUndefined();
      expect((await store.get('a', OTHER_HASH))?.tools).toEqual(TOOLS.slice(0, 1));
      await store.delete('a');
      expect(await store.get('a', OTHER_HASH)).toBeUndefined();
      expect((await store.get('b', HASH))?.tools).toEqual(TOOLS);
    });

    it('applies writes in the order they were called, awaited or not', async () => {
      const { store } = await setup();
      const writes = [store.put('echo', HASH, TOOLS), store.put('echo', HASH, TOOLS.slice(1)), store.putVerdict('echo', HASH, { kind: 'legacy' })];
      const read = store.get('echo', HASH);
      await Promise.all(writes);
      expect((await read)?.tools).toEqual(TOOLS.slice(1));
      await Promise.all([store.delete('echo'), store.deleteVerdict('echo')]);
      expect(await store.get('echo', HASH)).toBeUndefined();
      expect(await store.getVerdict('echo', HASH)).toBeUndefined();
    });

    it('keeps an era verdict per config, with when it was reached, apart from the list', async () => {
      const { store, clock } = await setup();
      const modern = { kind: 'modern' as const, discover: { supportedVersions: ['2026-07-28'] } };
      await store.put('echo', HASH, TOOLS);
      await store.putVerdict('echo', HASH, modern);
      expect(await store.getVerdict('echo', HASH)).toEqual({ verdict: modern, probedAt: T0 });
      expect(await store.getVerdict('echo', OTHER_HASH)).toBeUndefined();
      clock.at = T0 + 1000;
      await store.putVerdict('echo', HASH, { kind: 'legacy' });
      expect(await store.getVerdict('echo', HASH)).toEqual({ verdict: { kind: 'legacy' }, probedAt: T0 + 1000 });
      await store.delete('echo');
      expect(await store.getVerdict('echo', HASH)).toBeDefined();
      await store.put('echo', HASH, TOOLS);
      await store.deleteVerdict('echo');
      expect(await store.getVerdict('echo', HASH)).toBeUndefined();
      expect(await store.get('echo', HASH)).toBeDefined();
    });

    it('after close, misses and drops writes without rejecting; close again is fine', async () => {
      const { store } = await setup();
      await store.put('echo', HASH, TOOLS);
      await store.close();
      await store.close();
      expect(await store.get('echo', HASH)).toBeUndefined();
      await expect(store.put('echo', HASH, TOOLS)).resolves.toBeUndefined();
      await expect(store.putVerdict('echo', HASH, { kind: 'legacy' })).resolves.toBeUndefined();
      expect(await store.getVerdict('echo', HASH)).toBeUndefined();
    });
  });
}
