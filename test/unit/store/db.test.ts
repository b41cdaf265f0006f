import { chmodSync, closeSync, existsSync, openSync, readdirSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../../src/store/db.js';
import { applyMigrations, MIGRATIONS, SchemaTooNewError, type Migration } from '../../../src/store/migrations.js';
import { openToolCache } from '../../../src/store/open-tool-cache.js';
import { NoopToolCacheStore, SqliteToolCacheStore } from '../../../src/store/tool-cache-store.js';
import { HASH, TOOLS } from './cache-fixtures.js';
import { tempDir } from './store-helpers.js';

function open(path: string, options: Parameters<typeof openDatabase>[1] = {}) {
  const opened = openDatabase(path, options);
  onTestFinished(() => opened.close());
  return opened;
}

/** Writes a few lists through the real store, then closes it cleanly. */
async function seed(path: string): Promise<void> {
  const { store, warnings } = openToolCache(path);
  expect(warnings).toEqual([]);
  for (let i = 0; i < 40; i += 1) {
    await store.put(`server-${i}`, HASH, [{ ...TOOLS[0]!, description: 'x'.repeat(400) }]);
  }
  await store.put('echo', HASH, TOOLS);
  await store.close();
}

describe('openDatabase', () => {
  it('creates missing parent directories and turns on WAL and a busy timeout', () => {
    const path = join(tempDir(), 'state', 'nested', 'cache.db');
    const opened = open(path, { busyTimeoutMs: 1234 });
    expect(opened.warnings).toEqual([]);
    expect(opened.readOnly).toBe(false);
    expect(existsSync(path)).toBe(true);
    expect(opened.db!.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(opened.db!.pragma('busy_timeout', { simple: true })).toBe(1234);
  });

  it('keeps the file, its -wal and its new directory private to this user: it holds OAuth tokens', async () => {
    const dir = join(tempDir(), 'state');
    const path = join(dir, 'cache.db');
    open(path).db!.prepare('INSERT INTO stored_credential (server, token, saved_at) VALUES (?, ?, ?)').run('s', 't', 0);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);

    // A file an older version left readable by others is narrowed on open.
    const older = join(tempDir(), 'older.db');
    await seed(older);
    chmodSync(older, 0o644);
    const reopened = open(older);
    expect(reopened.warnings).toEqual([]);
    expect(statSync(older).mode & 0o777).toBe(0o600);
  });

  it('records the applied migrations and does not apply them again on reopen', () => {
    const path = join(tempDir(), 'cache.db');
    const first = open(path);
    const rows = () => first.db!.prepare('SELECT id, name, applied_at FROM migrations ORDER BY id').all();
    const before = rows();
    expect(before).toEqual(MIGRATIONS.map((m) => ({ id: m.id, name: m.name, applied_at: expect.any(Number) })));
    first.close();
    expect(() => first.close()).not.toThrow();

    const second = open(path);
    expect(second.warnings).toEqual([]);
    expect(second.db!.prepare('SELECT id, name, applied_at FROM migrations ORDER BY id').all()).toEqual(before);
    expect(applyMigrations(second.db!)).toEqual([]);
  });

  it('opens an in-memory database', () => {
    const opened = open(':memory:');
    expect(opened.warnings).toEqual([]);
    expect(opened.db!.prepare('SELECT count(*) FROM tool_cache').pluck().get()).toBe(0);
  });

  it('moves a file of garbage aside, with its -wal and -shm, and starts empty', async () => {
    const dir = tempDir();
    const path = join(dir, 'cache.db');
    const garbage = Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 7919) % 251));
    writeFileSync(path, garbage);
    writeFileSync(`${path}-wal`, 'not a wal');
    writeFileSync(`${path}-shm`, 'not a shm');

    const { store, warnings } = openToolCache(path);
    onTestFinished(() => store.close());
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/was corrupt \(file is not a database\); moved it to .*cache\.db\.corrupt-/);
    const aside = readdirSync(dir)
      .filter((name) => name.startsWith('cache.db.corrupt-'))
      .sort();
    expect(aside).toHaveLength(3);
    expect(aside[0]).toMatch(/^cache\.db\.corrupt-\d{4}-\d\d-\d\dT[\d-]+Z$/);
    expect(aside.slice(1)).toEqual([`${aside[0]}-shm`, `${aside[0]}-wal`]);
    expect(readFileSync(join(dir, aside[0]!))).toEqual(garbage);

    expect(store).toBeInstanceOf(SqliteToolCacheStore);
    await store.put('echo', HASH, TOOLS);
    expect((await store.get('echo', HASH))?.tools).toEqual(TOOLS);
  });

  it('moves aside a database whose pages are damaged past the header', async () => {
    const dir = tempDir();
    const path = join(dir, 'cache.db');
    await seed(path);
    // Page 1 (the header and schema) stays intact, so opening works; page 3 is overwritten.
    const pageSize = 4096;
    expect(readFileSync(path).length).toBeGreaterThan(pageSize * 3);
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(pageSize, 0xab), 0, pageSize, pageSize * 2);
    closeSync(fd);

    const { store, warnings } = openToolCache(path);
    onTestFinished(() => store.close());
    expect(warnings).toEqual([expect.stringMatching(/was corrupt .*moved it to/)]);
    expect(readdirSync(dir).some((name) => name.startsWith('cache.db.corrupt-'))).toBe(true);
    expect(await store.get('echo', HASH)).toBeUndefined();
    await store.put('echo', HASH, TOOLS);
    expect((await store.get('echo', HASH))?.tools).toEqual(TOOLS);
  });

  it('disables caching for a file written by a newer version, and leaves it alone', async () => {
    const path = join(tempDir(), 'cache.db');
    await seed(path);
    const raw = new Database(path);
    raw.prepare('INSERT INTO migrations (id, name, applied_at) VALUES (999, ?, 0)').run('from-the-future');
    raw.close();

    const { store, warnings } = openToolCache(path);
    expect(warnings).toEqual([expect.stringMatching(/disabled: .*migrations this version does not know \(999\)/)]);
    expect(store).toBeInstanceOf(NoopToolCacheStore);
    expect(readdirSync(join(path, '..')).filter((name) => name.includes('corrupt'))).toEqual([]);
  });

  it('disables caching when the directory cannot be created, even as root, without hanging', async () => {
    // /proc/self refuses new entries for every user; Node's recursive mkdir loops forever here.
    const { store, warnings } = openToolCache('/proc/self/switchboard/cache.db');
    expect(warnings).toEqual([expect.stringMatching(/^Tool cache disabled: cannot create the directory/)]);
    expect(store).toBeInstanceOf(NoopToolCacheStore);
    await expect(store.put('echo', HASH, TOOLS)).resolves.toBeUndefined();
    expect(await store.get('echo', HASH)).toBeUndefined();
  });

  it('opens read-only on request: reads work, writes are skipped', async () => {
    const path = join(tempDir(), 'cache.db');
    await seed(path);
    const opened = open(path, { readOnly: true });
    expect(opened.readOnly).toBe(true);
    expect(opened.warnings).toEqual([]);
    const store = new SqliteToolCacheStore(opened.db!, { readOnly: true });
    expect((await store.get('echo', HASH))?.tools).toEqual(TOOLS);
    await expect(store.put('echo', HASH, TOOLS.slice(1))).resolves.toBeUndefined();
    expect((await store.get('echo', HASH))?.tools).toEqual(TOOLS);
    // The connection itself refuses writes, so this is not only the store being polite.
    expect(() => opened.db!.exec('DELETE FROM tool_cache')).toThrow(/readonly/);
  });

  it('disables caching when asked for read-only and there is no file', () => {
    const opened = open(join(tempDir(), 'absent.db'), { readOnly: true });
    expect(opened.db).toBeUndefined();
    expect(opened.readOnly).toBe(true);
    expect(opened.warnings).toEqual([expect.stringMatching(/disabled: .*does not exist/)]);
  });
});

describe('applyMigrations', () => {
  const m = (id: number, sql = `CREATE TABLE t${id} (x INTEGER)`): Migration => ({ id, name: `m-${id}`, sql });

  function rawDb() {
    const db = new Database(':memory:');
    onTestFinished(() => {
      db.close();
    });
    return db;
  }

  it('applies only what is missing, in id order', () => {
    const db = rawDb();
    expect(applyMigrations(db, [m(1)])).toEqual([1]);
    expect(applyMigrations(db, [m(3), m(1), m(2)])).toEqual([2, 3]);
    expect(db.prepare('SELECT id FROM migrations ORDER BY applied_at, id').pluck().all()).toEqual([1, 2, 3]);
  });

  it('rolls every pending migration back when one fails', () => {
    const db = rawDb();
    expect(() => applyMigrations(db, [m(1), m(2, 'NOT SQL')])).toThrow();
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()).toEqual([]);
  });

  it('refuses a schema from a newer version', () => {
    const db = rawDb();
    applyMigrations(db, [m(1), m(2)]);
    expect(() => applyMigrations(db, [m(1)])).toThrow(SchemaTooNewError);
  });
});
