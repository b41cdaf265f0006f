import pg from 'pg';
import { inject, onTestFinished } from 'vitest';
import type { OpenedStores } from '../../src/store/open-tool-cache.js';
import { openPostgresStores, type OpenPostgresOptions } from '../../src/store/pg/open-postgres.js';
import { migratePostgres } from '../../src/store/pg/pg-migrations.js';
import { adminQuery, createDatabase } from './postgres-server.js';
import type { Cleanup } from './process.js';

/**
 * A fresh database on the suite's PostgreSQL server (test/global-setup.ts), dropped when the
 * test ends (or by `cleanup`): its URL.
 */
export async function freshDatabaseUrl(cleanup: Cleanup = onTestFinished): Promise<string> {
  const database = await createDatabase(inject('postgresUrl'));
  cleanup(() => database.drop());
  return database.url;
}

let shared: Promise<{ url: string; emptyAll: string }> | undefined;

/** The database this worker shares, created and migrated once, and the statement that empties it. */
function sharedDatabase(): Promise<{ url: string; emptyAll: string }> {
  return (shared ??= (async () => {
    const { url } = await createDatabase(inject('postgresUrl'));
    const pool = new pg.Pool({ connectionString: url });
    try {
      await migratePostgres(pool);
      // The tables are the migrations', listed once: they do not change while the worker runs.
      // DELETE, not TRUNCATE: a test leaves a few rows, and TRUNCATE gives each of the 16 tables
      // new files (~10 ms) where DELETE takes ~1 ms. No foreign keys, so any order goes.
      const tables = await pool.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'migrations'");
      const sequences = await pool.query<{ sequencename: string }>("SELECT sequencename FROM pg_sequences WHERE schemaname = 'public'");
      const statements = [...tables.rows.map((row) => `DELETE FROM ${row.tablename}`), ...sequences.rows.map((row) => `ALTER SEQUENCE ${row.sequencename} RESTART`)];
      // One simple query: one round trip, one implicit transaction.
      return { url, emptyAll: statements.join('; ') };
    } finally {
      await pool.end();
    }
  })());
}

/**
 * The PostgreSQL stores on `url` (default: an emptied shared database), their pool ended when the test
 * ends (registered after the drop, so it runs before it), or by `cleanup` (stores a file's tests share).
 */
export async function postgresStores(options: OpenPostgresOptions & { url?: string; cleanup?: Cleanup } = {}): Promise<OpenedStores> {
  const { cleanup = onTestFinished, ...rest } = options;
  const emptied = rest.url === undefined ? await sharedDatabase() : undefined;
  const opened = await openPostgresStores(rest.url ?? emptied!.url, rest);
  cleanup(async () => {
    await opened.store.close();
    await opened.close?.();
  });
  // Emptied over the stores' own pool, on the connection their migration check just opened: a
  // client of its own cost a connection (a PostgreSQL backend's start) per test. No store reads
  // anything as it opens, so they start from the empty tables all the same.
  if (emptied) await opened.pool!.query(emptied.emptyAll);
  return opened;
}

/**
 * Takes the database at `url` away from its clients as an outage would, without stopping the
 * suite's shared server: new connections are refused and the open ones are terminated.
 * `restore` lets connections in again.
 */
export async function cutOff(url: string): Promise<{ restore: () => Promise<void> }> {
  const name = new URL(url).pathname.slice(1);
  const admin = async (sql: string): Promise<void> => void (await adminQuery(inject('postgresUrl'), sql));
  await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
  await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);
  return { restore: () => admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`) };
}
