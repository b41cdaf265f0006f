import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openStores } from '../../../../src/store/open-stores.js';
import { SqliteToolCacheStore } from '../../../../src/store/tool-cache-store.js';
import { openPostgresStores, StoreUnavailableError } from '../../../../src/store/pg/open-postgres.js';
import { PgBackend } from '../../../../src/store/pg/pg-backend.js';
import { migratePostgres, PG_MIGRATIONS } from '../../../../src/store/pg/pg-migrations.js';
import { maskDatabaseUrl } from '../../../../src/store/pg/pg-url.js';
import { freePort } from '../../../helpers/free-port.js';
import { cutOff, freshDatabaseUrl, postgresStores } from '../../../helpers/pg-stores.js';
import { HASH, TOOLS } from '../cache-fixtures.js';
import { spyLogger, tempDir } from '../store-helpers.js';
import { join } from 'node:path';

/**
 * The PostgreSQL backend's own behaviour (issue #28) beyond the port contracts (contracts.test.ts):
 * migrations, several daemons on one database, refusals at open, an outage while running.
 */

async function pool(url: string): Promise<pg.Pool> {
  const p = new pg.Pool({ connectionString: url });
  // pool.end() resolves before its clients' sockets close: the database dropped WITH (FORCE) after
  // the test may terminate one, and an unheard pool 'error' would be an uncaught exception.
  p.on('error', () => {});
  onTestFinished(() => p.end());
  return p;
}

/** Resolves when the connection has ended (events.once would reject on the 'error' before it). */
function ending(client: pg.PoolClient): Promise<void> {
  return new Promise((resolve) => client.once('end', () => resolve()));
}

describe('PostgreSQL migrations', () => {
  it('apply once; two daemons migrating one fresh database at once take turns', async () => {
    const url = await freshDatabaseUrl();
    const [a, b] = [await pool(url), await pool(url)];
    const applied = await Promise.all([migratePostgres(a), migratePostgres(b)]);
    expect(applied.sort((x, y) => y.length - x.length)).toEqual([PG_MIGRATIONS.map((m) => m.id), []]);
    expect(await migratePostgres(a)).toEqual([]);
    const columns = await a.query<{ column_name: string; data_type: string }>(
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'replicas' ORDER BY ordinal_position",
    );
    expect(columns.rows).toEqual([
      { column_name: 'id', data_type: 'text' },
      { column_name: 'url', data_type: 'text' },
      { column_name: 'started_at', data_type: 'bigint' },
      { column_name: 'heartbeat_at', data_type: 'bigint' },
      { column_name: 'info', data_type: 'jsonb' },
    ]);
  });

  it('refuse a database migrated by a newer version, saying so, and leave it alone', async () => {
    const url = await freshDatabaseUrl();
    const admin = await pool(url);
    await migratePostgres(admin);
    await admin.query("INSERT INTO migrations (id, name, applied_at) VALUES (999, 'from-the-future', 0)");
    const opening = openPostgresStores(url);
    await expect(opening).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(opening).rejects.toThrow(/newer Switchboard .*999.*refusing to start/);
    expect((await admin.query('SELECT id FROM migrations ORDER BY id')).rows.map((r: { id: number }) => r.id)).toEqual([...PG_MIGRATIONS.map((m) => m.id), 999]);
  });
});

describe('opening the PostgreSQL store', () => {
  it('fails at once, naming host:port and never the password, when nothing listens there', async () => {
    const port = await freePort();
    const url = `postgres://switchboard:sekrit-pw@127.0.0.1:${port}/switchboard`;
    const opening = openStores({ url, dbPath: ':memory:', postgres: { connectTimeoutMs: 2000 } });
    await expect(opening).rejects.toBeInstanceOf(StoreUnavailableError);
    const message = await opening.then(
      () => '',
      (err: Error) => err.message,
    );
    expect(message).toContain(`127.0.0.1:${port}/switchboard`);
    expect(message).not.toContain('sekrit-pw');
  });

  it('opens SQLite without a URL, PostgreSQL with one, and says which', async () => {
    const sqlite = await openStores({ dbPath: join(tempDir(), 'state.db') });
    onTestFinished(() => sqlite.store.close());
    expect(sqlite.backend).toBe('sqlite');
    expect(sqlite.store).toBeInstanceOf(SqliteToolCacheStore);
    const postgres = await openStores({ url: await freshDatabaseUrl(), dbPath: ':memory:' });
    onTestFinished(async () => {
      await postgres.store.close();
      await postgres.close?.();
    });
    expect(postgres.backend).toBe('postgres');
    expect(postgres.pool).toBeInstanceOf(pg.Pool);
  });

  it('masks the password of a URL', () => {
    expect(maskDatabaseUrl('postgres://sb:p%40ss@db.example:6432/sb?sslmode=require')).toBe('postgres://sb:***@db.example:6432/sb?sslmode=require');
    expect(maskDatabaseUrl('postgres://db.example/sb')).toBe('postgres://db.example/sb');
  });
});

describe('several daemons on one PostgreSQL database', () => {
  it('share the tool cache, state, agents and pins', async () => {
    const url = await freshDatabaseUrl();
    const a = await postgresStores({ url });
    const b = await postgresStores({ url });
    await a.store.put('echo', HASH, TOOLS);
    expect((await b.store.get('echo', HASH))?.tools).toEqual(TOOLS);
    await a.state.set('instance-id:7337', 'x');
    expect(await b.state.get('instance-id:7337')).toBe('x');
    await a.agents.putAgent({ name: 'ci', settings: {}, createdAt: 1 });
    expect((await b.agents.agents()).map((agent) => agent.name)).toEqual(['ci']);
    await a.pins.put('echo', [{ tool: 't', hash: 'h', definition: {}, pinnedAt: 1 }]);
    expect((await b.pins.pinsOf('echo')).map((pin) => pin.hash)).toEqual(['h']);
  });

  it('claim one value between them, however many claim at once', async () => {
    const url = await freshDatabaseUrl();
    const stores = await Promise.all([1, 2, 3].map(() => postgresStores({ url })));
    const claims = await Promise.all(stores.flatMap((s, i) => [s.state.claim('sealing-key', `key-${i}-a`), s.state.claim('sealing-key', `key-${i}-b`)]));
    expect(new Set(claims).size).toBe(1);
    expect(await stores[0]!.state.get('sealing-key')).toBe(claims[0]);
  });

  it('hand a pending sign-in to one of them only', async () => {
    const url = await freshDatabaseUrl();
    const [a, b] = [await postgresStores({ url }), await postgresStores({ url })];
    const key = { server: 'remote', authHash: 'h' };
    await a.oauth.addPending('state-1', key, 1, 1000);
    const takes = await Promise.all([a.oauth.takePending('state-1', 2), b.oauth.takePending('state-1', 2), b.oauth.takePending('state-1', 2)]);
    expect(takes.filter(Boolean)).toHaveLength(1);
  });
});

describe('the PostgreSQL store losing its database while running', () => {
  it('warns (host:port, no password), answers from memory, and clears the warning when the database returns', async () => {
    const url = await freshDatabaseUrl();
    const logger = spyLogger();
    const stores = await postgresStores({ url, logger, probeIntervalMs: 100, connectTimeoutMs: 1000 });
    const key = { server: 'remote', authHash: 'h' };
    await stores.oauth.putTokens(key, 'https://as.example', { access_token: 'at-1' }, undefined, 1);
    await stores.state.set('k', 'v');
    const pin = { tool: 't', hash: 'h1', definition: { description: 'd' }, pinnedAt: 1 };
    await stores.pins.put('echo', [pin]);
    expect(await stores.pins.pinsOf('echo')).toEqual([pin]);
    expect(stores.liveWarnings?.()).toEqual([]);

    const outage = await cutOff(url);
    let restored = false;
    onTestFinished(async () => {
      if (!restored) await outage.restore();
    });
    // Reads resolve (never reject) with what this process knew.
    expect((await stores.oauth.latestTokens(key))?.tokens).toEqual({ access_token: 'at-1' });
    expect(await stores.state.get('k')).toBe('v');
    // A changed tool stays held: the pins last read answer for the table.
    expect(await stores.pins.pinsOf('echo')).toEqual([pin]);
    expect(await stores.store.get('echo', HASH)).toBeUndefined();
    await expect(
      stores.audit.append([{ ts: 1, transport: 'rest', server: 's', kind: 'tools/call', name: 'n', outcome: 'ok', durationMs: 1, argBytes: 0, resultBytes: 0 }]),
    ).resolves.toBeUndefined();
    const [warning] = stores.liveWarnings?.() ?? [];
    expect(warning).toMatch(new RegExp(`PostgreSQL store 127\\.0\\.0\\.1:\\d+/${new URL(url).pathname.slice(1)} unreachable since`));
    expect(logger.warn).toHaveBeenCalledWith(expect.objectContaining({ store: expect.stringMatching(/^127\.0\.0\.1:/) }), 'PostgreSQL store unreachable; serving from memory');
    expect(logger.warn).toHaveBeenCalledWith({ entries: 1 }, 'audit write dropped: store unreachable');
    // Logged by key, never by value.
    expect(JSON.stringify(logger.warn.mock.calls)).not.toContain('at-1');

    await outage.restore();
    restored = true;
    await expect.poll(() => stores.liveWarnings?.(), { timeout: 10_000 }).toEqual([]);
    await stores.store.put('echo', HASH, TOOLS);
    expect((await stores.store.get('echo', HASH))?.tools).toEqual(TOOLS);
  });

  // pg-pool hears no error on a connection it has handed out: before held-connection.ts, the
  // database ending one between two statements was an uncaught exception (seen in
  // agent-budgets.test.ts, a tool pin write held during cutOff), and vitest fails this file on it.
  it('a transaction whose connection the database ends between its statements fails as a write, heard, never thrown', async () => {
    const url = await freshDatabaseUrl();
    const logger = spyLogger();
    const backend = new PgBackend(url, { logger, probeIntervalMs: 100, checkIntervalMs: 0 });
    onTestFinished(() => backend.close());
    let outage: Awaited<ReturnType<typeof cutOff>> | undefined;
    onTestFinished(() => outage?.restore());
    const kept = await backend.write('test write', { step: 'held' }, () =>
      backend.transaction(async (client) => {
        await client.query('SELECT 1');
        const ended = ending(client);
        outage = await cutOff(url);
        await ended;
      }),
    );
    expect(kept).toBe(false);
    expect(backend.warnings()).toEqual([expect.stringContaining('unreachable since')]);
    expect(logger.warn).toHaveBeenCalledWith(expect.objectContaining({ what: 'held connection' }), 'PostgreSQL store unreachable; serving from memory');

    await outage!.restore();
    await expect.poll(() => backend.warnings()).toEqual([]);
    // The lost connection went, not back to the pool: the next transaction commits.
    expect(await backend.write('test write', { step: 'after' }, () => backend.transaction((client) => client.query('SELECT 1')))).toBe(true);
  });

  // Seen as agent-budgets.test.ts failing about one run in twelve under load: a connection the
  // database had not yet ended answered, so an outage ended with nothing to write; that pass
  // finished without an await and left itself as the pass in progress for good, and no later
  // return wrote anything (pg-budget-store.ts).
  it('writes the budget tokens counted during an outage once the database returns, also after a return that had none to write', async () => {
    const url = await freshDatabaseUrl();
    const stores = await postgresStores({ url, probeIntervalMs: 100, connectTimeoutMs: 1000 });
    const budgets = stores.budgets!;
    const db = await pool(url);
    const hour = 'h:2026-12-05T12';
    const written = async (): Promise<number> => Number((await db.query<{ tokens: number }>('SELECT tokens FROM budget_usage WHERE agent = $1', ['a'])).rows[0]?.tokens ?? 0);
    /** An outage the stores have seen (a read failed: the warning is up), and its end, once the probe has seen the database again. */
    const outage = async (during: () => Promise<void>): Promise<void> => {
      const cut = await cutOff(url);
      let restored = false;
      onTestFinished(async () => {
        if (!restored) await cut.restore();
      });
      // A connection the database has not ended yet may still answer: read until one fails.
      await expect
        .poll(async () => {
          await budgets.spent('a', [hour]);
          return stores.liveWarnings?.().length;
        })
        .toBe(1);
      await during();
      await cut.restore();
      restored = true;
      await expect.poll(() => stores.liveWarnings?.()).toEqual([]);
    };

    await outage(async () => {
      expect(await budgets.spent('a', [hour])).toEqual({ [hour]: 0 });
    });
    await outage(async () => {
      expect(await budgets.add('a', [hour], 40, Date.parse('2026-12-05T12:10:00Z'))).toEqual({ [hour]: 40 });
    });
    await expect.poll(written).toBe(40);
    // Written once, and no longer counted in memory besides.
    expect(await budgets.spent('a', [hour])).toEqual({ [hour]: 40 });
  });

  it('an OAuth refresh holding the lock while the database ends its connection still answers, and nothing is thrown', async () => {
    const url = await freshDatabaseUrl();
    const stores = await postgresStores({ url, probeIntervalMs: 100 });
    const key = { server: 'remote', authHash: 'h' };
    let held: pg.PoolClient | undefined;
    stores.pool!.on('acquire', (client) => (held = client));
    let outage: Awaited<ReturnType<typeof cutOff>> | undefined;
    onTestFinished(() => outage?.restore());
    const answer = await stores.oauth.withRefreshLock!(key, async () => {
      const ended = ending(held!);
      outage = await cutOff(url);
      await ended;
      return 'refreshed';
    });
    expect(answer).toBe('refreshed');
    expect(stores.liveWarnings?.()).toEqual([expect.stringContaining('unreachable since')]);
  });
});
