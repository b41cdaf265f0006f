import { describe, expect, it } from 'vitest';
import type { StateStore } from '../../../../src/store/ports.js';

/** A fresh, empty store; the factory registers its own cleanup. */
export type MakeStateStore = () => Promise<StateStore>;

/** The `StateStore` port's contract (store/ports.ts), for every backend. */
export function describeStateContract(name: string, make: MakeStateStore): void {
  describe(`StateStore contract: ${name}`, () => {
    it('returns what was set, per key, until it is replaced or deleted', async () => {
      const state = await make();
      expect(await state.get('instance-id:7001')).toBeUndefined();
      await state.set('instance-id:7001', 'a');
      await state.set('instance-id:7002', 'b');
      expect(await state.get('instance-id:7001')).toBe('a');
      await state.set('instance-id:7001', 'c');
      expect(await state.get('instance-id:7001')).toBe('c');
      await state.delete('instance-id:7001');
      expect(await state.get('instance-id:7001')).toBeUndefined();
      expect(await state.get('instance-id:7002')).toBe('b');
    });

    it('applies writes in the order they were called, awaited or not', async () => {
      const state = await make();
      const writes = [state.set('k', '1'), state.set('k', '2'), state.delete('k'), state.set('k', '3')];
      const read = state.get('k');
      await Promise.all(writes);
      expect(await read).toBe('3');
    });

    it('claims a key once: the first value stays, whoever claims after gets it', async () => {
      const state = await make();
      expect(await state.claim('sealing-key', 'first')).toBe('first');
      expect(await state.claim('sealing-key', 'second')).toBe('first');
      expect(await state.get('sealing-key')).toBe('first');
      await state.set('other', 'set');
      expect(await state.claim('other', 'claimed')).toBe('set');
      const claims = await Promise.all([state.claim('race', 'a'), state.claim('race', 'b'), state.claim('race', 'c')]);
      expect(claims).toEqual(['a', 'a', 'a']);
    });
  });
}
