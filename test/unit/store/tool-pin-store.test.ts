import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openToolCache } from '../../../src/store/open-tool-cache.js';
import type { ToolPin, ToolPinStore } from '../../../src/store/ports.js';
import { MemoryToolPinStore, SqliteToolPinStore } from '../../../src/store/tool-pin-store.js';
import { tempDir } from './store-helpers.js';

const pin = (tool: string, hash: string): ToolPin => ({ tool, hash, definition: { description: `${tool} ${hash}` }, pinnedAt: 1 });

function describePinStore(name: string, make: () => ToolPinStore): void {
  describe(`ToolPinStore: ${name}`, () => {
    it('keeps pins per server, replacing a tool by name', async () => {
      const store = make();
      expect(await store.pinsOf('a')).toEqual([]);
      await store.put('a', [pin('x', '1'), pin('y', '1')]);
      await store.put('a', [pin('x', '2')]);
      await store.put('b', [pin('x', '9')]);
      const byTool = (pins: ToolPin[]) => Object.fromEntries(pins.map((p) => [p.tool, p.hash]));
      expect(byTool(await store.pinsOf('a'))).toEqual({ x: '2', y: '1' });
      expect(await store.pinsOf('b')).toEqual([pin('x', '9')]);
    });
  });
}

describePinStore('memory', () => new MemoryToolPinStore());
describePinStore('SQLite file', () => openToolCache(join(tempDir(), 'pins.db')).pins);

describe('SqliteToolPinStore', () => {
  it('keeps pins across a reopen of the file (the daemon restarting)', async () => {
    const path = join(tempDir(), 'pins.db');
    const first = openToolCache(path);
    expect(first.pins).toBeInstanceOf(SqliteToolPinStore);
    await first.pins.put('srv', [pin('t', 'abc')]);
    await first.store.close();
    const second = openToolCache(path);
    expect(await second.pins.pinsOf('srv')).toEqual([pin('t', 'abc')]);
    await second.store.close();
  });
});
