import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/client';
import pino from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../../../src/store/db.js';
import { SqliteToolCacheStore } from '../../../../src/store/tool-cache-store.js';
import { CachedLists } from '../../../../src/upstream/server/cached-lists.js';
import { tempDir } from '../../../helpers/process.js';

const HASH = 'c'.repeat(64);
const TOOLS: Tool[] = [{ name: 'echo', description: 'Echoes its input', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }];

/** Cached lists over a real SQLite tool cache on a temp file, and the warnings they log. */
async function cachedLists(): Promise<{ store: SqliteToolCacheStore; lists: CachedLists; warnings: Array<Record<string, unknown>> }> {
  const opened = openDatabase(join(await tempDir(), 'cache.db'));
  if (!opened.db) throw new Error(opened.warnings.join('; '));
  const store = new SqliteToolCacheStore(opened.db);
  onTestFinished(() => store.close());
  const warnings: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line) as Record<string, unknown>) });
  return { store, lists: new CachedLists(store, log), warnings };
}

describe('CachedLists', () => {
  it('serves a cached list whose tools are MCP', async () => {
    const { store, lists, warnings } = await cachedLists();
    await store.put('echo', HASH, TOOLS);
    expect((await lists.load({ name: 'echo', configHash: HASH }))?.tools).toEqual(TOOLS);
    expect(warnings).toEqual([]);
  });

  // A list cached before tools/list was checked for these fields (or by an older replica on a
  // shared database) would otherwise be served at start, and break tool search for every agent.
  it('treats a cached list with a tool the listing would refuse as a miss, and says so', async () => {
    const { store, lists, warnings } = await cachedLists();
    await store.put('odd', HASH, [...TOOLS, { name: 'odd', description: 42 } as unknown as Tool]);
    expect(await lists.load({ name: 'odd', configHash: HASH })).toBeUndefined();
    expect(lists.peek({ name: 'odd', configHash: HASH })).toBeUndefined();
    expect(warnings).toEqual([expect.objectContaining({ server: 'odd', problem: 'tool "odd": "description" is not a string', msg: 'cached tool list ignored: not MCP' })]);
  });
});
