import { openToolCache, type OpenedStores } from './open-tool-cache.js';
import type { StoreLogger } from './db.js';
import type { OpenPostgresOptions } from './pg/open-postgres.js';

export { StoreUnavailableError } from './store-errors.js';
export { maskDatabaseUrl } from './pg/pg-url.js';
export type { OpenedStores } from './open-tool-cache.js';

export interface OpenStoresOptions {
  /** A `postgres://` URL: every store in that database. Absent: the SQLite file at `dbPath`. */
  url?: string | undefined;
  /** The SQLite file (or `':memory:'`) used without `url`. */
  dbPath: string;
  logger?: StoreLogger;
  /** @default Date.now */
  now?: () => number;
  /** Pool settings for PostgreSQL (connect timeout, outage probe). */
  postgres?: Omit<OpenPostgresOptions, 'logger' | 'now'>;
}

/**
 * Opens the daemon's stores on the configured backend (issue #28): PostgreSQL when `url` is
 * set, else SQLite at `dbPath` (the default). SQLite never throws (an unusable file becomes a
 * warning and an in-memory fallback); PostgreSQL throws `StoreUnavailableError` when the
 * database is unreachable or its schema is newer, so `serve` can refuse to start.
 */
export async function openStores(options: OpenStoresOptions): Promise<OpenedStores> {
  const common = { ...(options.logger ? { logger: options.logger } : {}), ...(options.now ? { now: options.now } : {}) };
  if (options.url) {
    // Loaded only when asked for: a SQLite daemon never loads the PostgreSQL driver.
    const { openPostgresStores } = await import('./pg/open-postgres.js');
    return openPostgresStores(options.url, { ...options.postgres, ...common });
  }
  return openToolCache(options.dbPath, common);
}
