import { errorMessage } from '../errors.js';
import { openDatabase, type StoreLogger } from './db.js';
import { MemoryStateStore, SqliteStateStore, type StateStore } from './state-store.js';
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
): { store: ToolCacheStore; state: StateStore; warnings: string[] } {
  const opened = openDatabase(path, options.logger ? { logger: options.logger } : {});
  const warnings = [...opened.warnings];
  if (!opened.db) return { store: new NoopToolCacheStore(), state: new MemoryStateStore(), warnings };
  const storeOptions = {
    readOnly: opened.readOnly,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.now ? { now: options.now } : {}),
  };
  let store: ToolCacheStore;
  try {
    store = new SqliteToolCacheStore(opened.db, storeOptions);
  } catch (err) {
    opened.close();
    warnings.push(`Tool cache disabled: ${path} has no usable tool_cache table (${errorMessage(err)})`);
    return { store: new NoopToolCacheStore(), state: new MemoryStateStore(), warnings };
  }
  let state: StateStore;
  try {
    state = new SqliteStateStore(opened.db, storeOptions);
  } catch (err) {
    // A read-only file from before the state table: the cache still works, the state is per run.
    warnings.push(`Daemon state kept in memory only: ${path} has no usable daemon_state table (${errorMessage(err)})`);
    state = new MemoryStateStore();
  }
  return { store, state, warnings };
}
