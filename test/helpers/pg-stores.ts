import pg from 'pg';
import { inject, onTestFinished } from 'vitest';
import type { OpenedStores } from '../../src/store/open-tool-cache.js';
import { openPostgresStores, type OpenPostgresOptions } from '../../src/store/pg/open-postgres.js';
import { migratePostgres } from '../../src/store/pg/pg-migrations.js';
import { createDatabase } from './postgres-server.js';
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

let shared: Promise<string> | undefined;

/**
 * An empty, migrated database for one test: a database this test worker shares (created and
 * migrated once, thrown away with the suite's server), every table emptied first. Tests of a
 * worker run one at a time, so emptying is isolation enough — and costs milliseconds where a
 * database of its own costs a few hundred, and the contract suites want one per test. A test
 * that needs a database to itself (several pools, an outage) takes `freshDatabaseUrl`.
 */
export async function emptiedDatabaseUrl(): Promise<string> {
  shared ??= (async () => {
    const { url } = await createDatabase(inject('postgresUrl'));
    const pool = new pg.Pool({ connectionString: url });
    try {
      await migratePostgres(pool);
    } finally {
      await pool.end();
    }
    return url;
  })();
  const url = await shared;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'migrations'");
    await client.query(`TRUNCATE ${tables.rows.map((row) => row.tablename).join(', ')} RESTART IDENTITY`);
  } finally {
    await client.end();
  }
  return url;
}

/**
 * The PostgreSQL stores on `url` (default: an emptied shared database), their pool ended when the test
 * ends (registered after the drop, so it runs before it), or by `cleanup` (stores a file's tests share).
 */
export async function postgresStores(options: OpenPostgresOptions & { url?: string; cleanup?: Cleanup } = {}): Promise<OpenedStores> {
  const { cleanup = onTestFinished, ...rest } = options;
  const url = rest.url ?? (await emptiedDatabaseUrl());
  const opened = await openPostgresStores(url, rest);
  cleanup(async () => {
    await opened.store.close();
    await opened.close?.();
  });
  return opened;
}

/**
 * Takes the database at `url` away from its clients as an outage would, without stopping the
 * suite's shared server: new connections are refused and the open ones are terminated.
 * `restore` lets connections in again.
 */
export async function cutOff(url: string): Promise<{ restore: () => Promise<void> }> {
  const name = new URL(url).pathname.slice(1);
  const admin = async (sql: string): Promise<void> => {
    const client = new pg.Client({ connectionString: inject('postgresUrl') });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
  await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);
  return { restore: () => admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`) };
}
