import { describe, expect, it } from 'vitest';
import type { ToolPin, ToolPinStore } from '../../../../src/store/ports.js';

/** A fresh, empty store; the factory registers its own cleanup. */
export type MakePinStore = () => Promise<ToolPinStore>;

const pin = (tool: string, hash: string): ToolPin => ({ tool, hash, definition: { description: `${tool} ${hash}` }, pinnedAt: 1 });

/** The `ToolPinStore` port's contract (store/ports.ts), for every backend. */
export function describePinContract(name: string, make: MakePinStore): void {
  describe(`ToolPinStore contract: ${name}`, () => {
    it('keeps pins per server, replacing a tool by name', async () => {
      const store = await make();
      expect(await store.pinsOf('a')).toEqual([]);
      await store.put('a', [pin('x', '1'), pin('y', '1')]);
      await store.put('a', [pin('x', '2')]);
      await store.put('b', [pin('x', '9')]);
      const byTool = (pins: ToolPin[]) => Object.fromEntries(pins.map((p) => [p.tool, p.hash]));
      expect(byTool(await store.pinsOf('a'))).toEqual({ x: '2', y: '1' });
      expect(await store.pinsOf('b')).toEqual([pin('x', '9')]);
    });

    it('applies writes in the order they were called, awaited or not', async () => {
      const store = await make();
      const writes = [store.put('a', [pin('x', '1')]), store.put('a', [pin('x', '2')]), store.put('a', [pin('x', '3')])];
      const read = store.pinsOf('a');
      await Promise.all(writes);
      expect(await read).toEqual([pin('x', '3')]);
    });
  });
}
