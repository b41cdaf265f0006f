import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openToolCache } from '../../../src/store/open-tool-cache.js';
import type { ToolPin } from '../../../src/store/ports.js';
import { SqliteToolPinStore } from '../../../src/store/tool-pin-store.js';
import { tempDir } from './store-helpers.js';

const pin = (tool: string, hash: string): ToolPin => ({ tool, hash, definition: { description: `${tool} ${hash}` }, pinnedAt: 1 });

// The port's contract, for every backend, is in contracts/pin-contract.ts (run by contracts.test.ts).

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
