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
