import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/server';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../../src/store/db.js';
import { openToolCache } from '../../../src/store/open-tool-cache.js';
import { CACHE_FORMAT_VERSION, NoopToolCacheStore, SqliteToolCacheStore, type ToolCacheStore } from '../../../src/store/tool-cache-store.js';
import { HASH, TOOLS } from './cache-fixtures.js';
import { spyLogger, tempDir } from './store-helpers.js';

const T0 = Date.UTC(2026, 0, 1);

/** A store on a temp file with a clock the test moves. */
function fileStore(options: { logger?: ReturnType<typeof spyLogger> } = {}) {
  const clock = { now: T0 };
  const path = join(tempDir(), 'cache.db');
  const opened = openDatabase(path);
  if (!opened.db) throw new Error(opened.warnings.join('; '));
  const db = opened.db;
  const store = new SqliteToolCacheStore(db, { now: () => clock.now, ...options });
  onTestFinished(() => store.close());
  return { store, db, path, clock };
}

/** What every backend does is in contracts/tool-cache-contract.ts; this is SQLite's own. */
describe('SqliteToolCacheStore', () => {
  it('keeps the list across a reopen of the file', async () => {
    const path = join(tempDir(), 'cache.db');
    const first = openToolCache(path);
    // Not awaited: the write is in the file when the call returns.
    void first.store.put('echo', HASH, TOOLS);
    await first.store.close();
    const second = openToolCache(path);
    onTestFinished(() => second.store.close());
    expect(second.warnings).toEqual([]);
    expect((await second.store.get('echo', HASH))?.tools).toEqual(TOOLS);
  });

  it('misses on a row written with another format version', async () => {
    const { store, db, clock } = fileStore();
    const insert = db.prepare(
      `INSERT OR REPLACE INTO tool_cache (server, config_hash, format_version, tools_json, tool_count, cached_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
    insert.run('echo', HASH, CACHE_FORMAT_VERSION - 1, JSON.stringify(TOOLS), TOOLS.length, clock.now);
    expect(await store.get('echo', HASH)).toBeUndefined();
    // The same row with the current version is a hit, so the version alone made the difference.
    insert.run('echo', HASH, CACHE_FORMAT_VERSION, JSON.stringify(TOOLS), TOOLS.length, clock.now);
    expect((await store.get('echo', HASH))?.tools).toEqual(TOOLS);
  });

  it('does not store an empty list, and an empty list removes an earlier one', async () => {
    const { store, db } = fileStore();
    const count = () => db.prepare('SELECT count(*) FROM tool_cache').pluck().get();
    await store.put('echo', HASH, []);
    expect(count()).toBe(0);
    await store.put('echo', HASH, TOOLS);
    expect(count()).toBe(1);
    await store.put('echo', HASH, []);
    expect(count()).toBe(0);
  });

  it('misses on an empty or unreadable stored list', async () => {
    const { store, db, clock } = fileStore();
    const insert = db.prepare(
      `INSERT OR REPLACE INTO tool_cache (server, config_hash, format_version, tools_json, tool_count, cached_at)
       VALUES (?, ?, ?, ?, 0, ?)`,
    );
    for (const json of ['[]', '{not json', '{"name":"x"}', '[{"title":"no name"}]']) {
      insert.run('echo', HASH, CACHE_FORMAT_VERSION, json, clock.now);
      expect(await store.get('echo', HASH), json).toBeUndefined();
    }
  });

  it('logs a failed write and resolves instead of rejecting', async () => {
    const logger = spyLogger();
    const { store, db } = fileStore({ logger });
    // Not JSON-serialisable: the failure happens before SQLite is reached.
    const bad = [{ name: 'x', inputSchema: { type: 'object', default: 1n } }] as unknown as Tool[];
    await expect(store.put('echo', HASH, bad)).resolves.toBeUndefined();
    // A real SQLite failure on a prepared statement: its table is gone.
    db.exec('DROP TABLE tool_cache');
    await expect(store.put('echo', HASH, TOOLS)).resolves.toBeUndefined();
    await expect(store.delete('echo')).resolves.toBeUndefined();
    expect(await store.get('echo', HASH)).toBeUndefined();
    const messages = logger.warn.mock.calls.map((call) => call[1]);
    expect(messages).toEqual(['tool cache write failed', 'tool cache write failed', 'tool cache delete failed', 'tool cache read failed']);
  });

  it('skips writes when read-only', async () => {
    const logger = spyLogger();
    const opened = openDatabase(':memory:');
    const store = new SqliteToolCacheStore(opened.db!, { readOnly: true, logger });
    onTestFinished(() => store.close());
    await store.put('echo', HASH, TOOLS);
    expect(await store.get('echo', HASH)).toBeUndefined();
    expect(logger.warn).not.toHaveBeenCalled();
  });

  it('works on an in-memory database', async () => {
    const { store, warnings } = openToolCache(':memory:');
    onTestFinished(() => store.close());
    expect(warnings).toEqual([]);
    expect(store).toBeInstanceOf(SqliteToolCacheStore);
    await store.put('echo', HASH, TOOLS);
    expect((await store.get('echo', HASH))?.tools).toEqual(TOOLS);
  });

  it('throws from the constructor only when the schema is missing', async () => {
    const Database = (await import('better-sqlite3')).default;
    const raw = new Database(':memory:');
    onTestFinished(() => {
      raw.close();
    });
    expect(() => new SqliteToolCacheStore(raw)).toThrow(/no such table/);
  });
});

describe('NoopToolCacheStore', () => {
  it('keeps nothing and never rejects', async () => {
    const store: ToolCacheStore = new NoopToolCacheStore();
    await store.put('echo', HASH, TOOLS);
    await store.putVerdict('echo', HASH, { kind: 'legacy' });
    expect(await store.get('echo', HASH)).toBeUndefined();
    expect(await store.getVerdict('echo', HASH)).toBeUndefined();
    await store.delete('echo');
    await store.deleteVerdict('echo');
    await store.close();
    await store.close();
  });
});
