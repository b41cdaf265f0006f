import { describe, expect, it } from 'vitest';
import type { CredentialStore } from '../../../../src/store/ports.js';

/** A fresh, empty store; the factory registers its own cleanup. */
export type MakeCredentialStore = () => Promise<CredentialStore>;

/** The `CredentialStore` port's contract (store/ports.ts), for every backend. */
export function describeCredentialContract(name: string, make: MakeCredentialStore): void {
  describe(`CredentialStore contract: ${name}`, () => {
    it('keeps one token per server until it is replaced or deleted', async () => {
      const credentials = await make();
      expect(await credentials.get('remote')).toBeUndefined();
      await credentials.put('remote', 't1', 1);
      await credentials.put('local', 'l1', 1);
      await credentials.put('remote', 't2', 2);
      expect(await credentials.get('remote')).toBe('t2');
      await credentials.delete('remote');
      expect(await credentials.get('remote')).toBeUndefined();
      expect(await credentials.get('local')).toBe('l1');
    });

    it('applies writes in the order they were called, awaited or not', async () => {
      const credentials = await make();
      const writes = [credentials.put('remote', 't1', 1), credentials.delete('remote'), credentials.put('remote', 't3', 3)];
      const read = credentials.get('remote');
      await Promise.all(writes);
      expect(await read).toBe('t3');
    });
  });
}
