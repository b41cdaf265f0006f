import pg from 'pg';
import { inject, onTestFinished } from 'vitest';
import type { OpenedStores } from '../../src/store/open-tool-cache.js';
import { openPostgresStores, type OpenPostgresOptions } from '../../src/store/pg/open-postgres.js';
import { createDatabase } from './postgres-server.js';

/**
 * A fresh database on the suite's PostgreSQL server (test/global-setup.ts), dropped when the
 * test ends: its URL.
 */
export async function freshDatabaseUrl(): Promise<string> {
  const database = await createDatabase(inject('postgresUrl'));
  onTestFinished(() => database.drop());
  return database.url;
}

/**
 * The PostgreSQL stores on `url` (default: a fresh database), their pool ended when the test
 * ends (registered after the drop, so it runs before it).
 */
export async function postgresStores(options: OpenPostgresOptions & { url?: string } = {}): Promise<OpenedStores> {
  const url = options.url ?? (await freshDatabaseUrl());
  const opened = await openPostgresStores(url, options);
  onTestFinished(async () => {
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
