import { errorMessage } from '../../errors.js';
import type { StoreLogger } from '../db.js';
import { SchemaTooNewError } from '../migrations.js';
import { StoreUnavailableError } from '../store-errors.js';
import type { OpenedStores } from '../open-tool-cache.js';
import { PgAgentStore } from './pg-agent-store.js';
import { PgAuditStore } from './pg-audit-store.js';
import { PgBackend, type PgBackendOptions } from './pg-backend.js';
import { migratePostgres } from './pg-migrations.js';
import { PgOAuthStore } from './pg-oauth-store.js';
import { PgStateStore } from './pg-state-store.js';
import { PgToolCacheStore } from './pg-tool-cache-store.js';
import { PgToolPinStore } from './pg-tool-pin-store.js';
import { PgBudgetStore } from './pg-budget-store.js';
import { PgRateLimits } from './pg-rate-limits.js';
import { PgTaskStore } from './pg-task-store.js';
import { withoutPassword } from './pg-url.js';

export interface OpenPostgresOptions extends PgBackendOptions {
  logger?: StoreLogger;
  /** @default Date.now */
  now?: () => number;
}

export { StoreUnavailableError };

/**
 * Connects to the PostgreSQL database at `url`, migrates it (under an advisory lock, so replicas
 * starting together take turns) and wraps it in the stores. Unlike the SQLite path it throws —
 * `StoreUnavailableError` — when the database cannot be reached or its schema is newer than this
 * version: a replica that silently ran on an empty, private store would split the cluster.
 */
export async function openPostgresStores(url: string, options: OpenPostgresOptions = {}): Promise<OpenedStores> {
  const backend = new PgBackend(url, options);
  try {
    await migratePostgres(backend.pool, undefined, options.now);
  } catch (err) {
    await backend.close();
    if (err instanceof SchemaTooNewError) {
      throw new StoreUnavailableError(
        `PostgreSQL store ${backend.target} has a schema from a newer Switchboard (${err.message}); refusing to start. Upgrade this daemon, or point it at another database`,
        { cause: err },
      );
    }
    throw new StoreUnavailableError(`cannot use the PostgreSQL store at ${backend.target}: ${withoutPassword(errorMessage(err), url)}`, { cause: err });
  }
  const now = options.now ? { now: options.now } : {};
  const oauth = new PgOAuthStore(backend);
  const store = new PgToolCacheStore(backend, now);
  const audit = new PgAuditStore(backend);
  return {
    backend: 'postgres',
    pool: backend.pool,
    store,
    state: new PgStateStore(backend, now),
    oauth,
    credentials: oauth.credentials,
    agents: new PgAgentStore(backend),
    pins: new PgToolPinStore(backend),
    budgets: new PgBudgetStore(backend),
    rateLimits: new PgRateLimits(backend),
    tasks: new PgTaskStore(backend),
    audit,
    warnings: [],
    liveWarnings: () => backend.warnings(),
    close: () => backend.close(),
  };
}
