import { errorMessage } from '../errors.js';
import { openDatabase, type StoreLogger } from './db.js';
import { NoopToolCacheStore, SqliteToolCacheStore, type ToolCacheStore } from './tool-cache-store.js';

export interface OpenToolCacheOptions {
  logger?: StoreLogger;
  /** @default Date.now */
  now?: () => number;
}

/**
 * The daemon's one-call setup: opens the database at `path` (or `':memory:'`) and wraps it in a
 * store. Never throws; when there is no usable database the store is a `NoopToolCacheStore`
 * and `warnings` says why. The warnings are returned, not logged: the caller logs them and
 * shows them in `/status`.
 */
export function openToolCache(
  path: string,
  options: OpenToolCacheOptions = {},
): { store: ToolCacheStore; warnings: string[] } {
  const opened = openDatabase(path, options.logger ? { logger: options.logger } : {});
  const warnings = [...opened.warnings];
  if (!opened.db) return { store: new NoopToolCacheStore(), warnings };
  try {
    const store = new SqliteToolCacheStore(opened.db, {
      readOnly: opened.readOnly,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
    return { store, warnings };
  } catch (err) {
    opened.close();
    warnings.push(`Tool cache disabled: ${path} has no usable tool_cache table (${errorMessage(err)})`);
    return { store: new NoopToolCacheStore(), warnings };
  }
}
