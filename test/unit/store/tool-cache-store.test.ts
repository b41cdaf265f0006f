import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/server';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../../src/store/db.js';
import { openToolCache } from '../../../src/store/open-tool-cache.js';
import {
  CACHE_FORMAT_VERSION,
  CACHE_MAX_AGE_MS,
  NoopToolCacheStore,
  SqliteToolCacheStore,
  type ToolCacheStore,
} from '../../../src/store/tool-cache-store.js';
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

describe('SqliteToolCacheStore', () => {
  it('returns what was put, with its hash, version and time', () => {
    const { store } = fileStore();
    store.put('echo', HASH, TOOLS);
    expect(store.get('echo', HASH)).toEqual({
      server: 'echo',
      configHash: HASH,
      formatVersion: CACHE_FORMAT_VERSION,
      tools: TOOLS,
      cachedAt: T0,
    });
    expect(store.get('other', HASH)).toBeUndefined();
  });

  it('keeps the list across a reopen of the file', () => {
    const path = join(tempDir(), 'cache.db');
    const first = openToolCache(path);
    first.store.put('echo', HASH, TOOLS);
    first.store.close();
    const second = openToolCache(path);
    onTestFinished(() => second.store.close());
    expect(second.warnings).toEqual([]);
    expect(second.store.get('echo', HASH)?.tools).toEqual(TOOLS);
  });

  it('misses when the config hash changed', () => {
    const { store } = fileStore();
    store.put('echo', HASH, TOOLS);
    expect(store.get('echo', 'b'.repeat(64))).toBeUndefined();
  });

  it('misses on a row written with another format version', () => {
    const { store, db, clock } = fileStore();
    const insert = db.prepare(
      `INSERT OR REPLACE INTO tool_cache (server, config_hash, format_version, tools_json, tool_count, cached_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
    insert.run('echo', HASH, CACHE_FORMAT_VERSION - 1, JSON.stringify(TOOLS), TOOLS.length, clock.now);
    expect(store.get('echo', HASH)).toBeUndefined();
    // The same row with the current version is a hit, so the version alone made the difference.
    insert.run('echo', HASH, CACHE_FORMAT_VERSION, JSON.stringify(TOOLS), TOOLS.length, clock.now);
    expect(store.get('echo', HASH)?.tools).toEqual(TOOLS);
  });

  it('misses once the list is older than 30 days', () => {
    const { store, clock } = fileStore();
    store.put('echo', HASH, TOOLS);
    clock.now = T0 + CACHE_MAX_AGE_MS;
    expect(store.get('echo', HASH)).toBeDefined();
    clock.now = T0 + CACHE_MAX_AGE_MS + 1;
    expect(store.get('echo', HASH)).toBeUndefined();
    expect(CACHE_MAX_AGE_MS).toBe(30 * 24 * 60 * 60 * 1000);
  });

  it('does not store an empty list, and an empty list removes an earlier one', () => {
    const { store, db } = fileStore();
    const count = () => db.prepare('SELECT count(*) FROM tool_cache').pluck().get();
    store.put('echo', HASH, []);
    expect(count()).toBe(0);
    store.put('echo', HASH, TOOLS);
    expect(count()).toBe(1);
    store.put('echo', HASH, []);
    expect(count()).toBe(0);
    expect(store.get('echo', HASH)).toBeUndefined();
  });

  it('misses on an empty or unreadable stored list', () => {
    const { store, db, clock } = fileStore();
    const insert = db.prepare(
      `INSERT OR REPLACE INTO tool_cache (server, config_hash, format_version, tools_json, tool_count, cached_at)
       VALUES (?, ?, ?, ?, 0, ?)`,
    );
    for (const json of ['[]', '{not json', '{"name":"x"}', '[{"title":"no name"}]']) {
      insert.run('echo', HASH, CACHE_FORMAT_VERSION, json, clock.now);
      expect(store.get('echo', HASH), json).toBeUndefined();
    }
  });

  it('replaces a server list and deletes one server only', () => {
    const { store } = fileStore();
    store.put('a', HASH, TOOLS);
    store.put('b', HASH, TOOLS);
    store.put('a', HASH, TOOLS.slice(0, 1));
    expect(store.get('a', HASH)?.tools).toEqual(TOOLS.slice(0, 1));
    store.delete('a');
    expect(store.get('a', HASH)).toBeUndefined();
    expect(store.get('b', HASH)?.tools).toEqual(TOOLS);
  });

  it('logs a failed write instead of throwing', () => {
    const logger = spyLogger();
    const { store, db } = fileStore({ logger });
    // Not JSON-serialisable: the failure happens before SQLite is reached.
    const bad = [{ name: 'x', inputSchema: { type: 'object', default: 1n } }] as unknown as Tool[];
    expect(() => store.put('echo', HASH, bad)).not.toThrow();
    // A real SQLite failure on a prepared statement: its table is gone.
    db.exec('DROP TABLE tool_cache');
    expect(() => store.put('echo', HASH, TOOLS)).not.toThrow();
    expect(() => store.delete('echo')).not.toThrow();
    expect(store.get('echo', HASH)).toBeUndefined();
    const messages = logger.warn.mock.calls.map((call) => call[1]);
    expect(messages).toEqual([
      'tool cache write failed',
      'tool cache write failed',
      'tool cache delete failed',
      'tool cache read failed',
    ]);
  });

  it('is inert after close, and close is idempotent', () => {
    const { store } = fileStore();
    store.put('echo', HASH, TOOLS);
    store.close();
    expect(() => store.close()).not.toThrow();
    expect(store.get('echo', HASH)).toBeUndefined();
    expect(() => store.put('echo', HASH, TOOLS)).not.toThrow();
  });

  it('skips writes when read-only', () => {
    const logger = spyLogger();
    const opened = openDatabase(':memory:');
    const store = new SqliteToolCacheStore(opened.db!, { readOnly: true, logger });
    onTestFinished(() => store.close());
    store.put('echo', HASH, TOOLS);
    expect(store.get('echo', HASH)).toBeUndefined();
    expect(logger.warn).not.toHaveBeenCalled();
  });

  it('works on an in-memory database', () => {
    const { store, warnings } = openToolCache(':memory:');
    onTestFinished(() => store.close());
    expect(warnings).toEqual([]);
    expect(store).toBeInstanceOf(SqliteToolCacheStore);
    store.put('echo', HASH, TOOLS);
    expect(store.get('echo', HASH)?.tools).toEqual(TOOLS);
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
  it('keeps nothing and never throws', () => {
    const store: ToolCacheStore = new NoopToolCacheStore();
    store.put('echo', HASH, TOOLS);
    expect(store.get('echo', HASH)).toBeUndefined();
    store.delete('echo');
    store.close();
    store.close();
  });
});
