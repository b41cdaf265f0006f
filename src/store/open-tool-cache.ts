import type pg from 'pg';
import { errorMessage } from '../errors.js';
import { MemoryAgentStore, SqliteAgentStore } from './agent-store.js';
import { openAuditStore } from './audit-store.js';
import { openDatabase, type StoreLogger } from './db.js';
import { SqliteOAuthStore } from './oauth-store.js';
import { MemoryBudgetStore, SqliteBudgetStore } from './budget-store.js';
import type { AgentStore, AuditStore, BudgetStore, SharedRateLimits, CredentialStore, OAuthStore, StateStore, ToolCacheStore, ToolPinStore } from './ports.js';
import { MemoryStateStore, SqliteStateStore } from './state-store.js';
import { NoopToolCacheStore, SqliteToolCacheStore } from './tool-cache-store.js';
import { MemoryToolPinStore, SqliteToolPinStore } from './tool-pin-store.js';
import { MemoryTaskStore, SqliteTaskStore, type TaskStore } from './task-store.js';

export interface OpenToolCacheOptions {
  logger?: StoreLogger;
  /** @default Date.now */
  now?: () => number;
}

/** The stores of one database (SQLite, or PostgreSQL with `openStores`), each used through its port. */
export interface OpenedStores {
  /** Which backend holds them. Absent means `sqlite` (an embedder's own set). */
  backend?: 'sqlite' | 'postgres';
  /** The PostgreSQL pool every store shares (cluster code may use it too); only with `postgres`. */
  pool?: pg.Pool;
  store: ToolCacheStore;
  state: StateStore;
  oauth: OAuthStore;
  /** On the OAuth store's connection. */
  credentials: CredentialStore;
  /** Agents and their key hashes (issue #22), on the same connection. */
  agents: AgentStore;
  /** Tool pinning (issue #22), on the tool cache's connection. */
  pins: ToolPinStore;
  /** On the same connection when it takes writes, else in memory. */
  audit: AuditStore;
  /** Tokens handed to each agent per window (issue #38). @default in memory */
  budgets?: BudgetStore;
  /** Per-agent rate limits every replica on the database takes from (issue #43). @default none: each daemon counts its own */
  rateLimits?: SharedRateLimits;
  /** Gateway-run tasks (issue #41): shared by the replicas on PostgreSQL. @default in memory */
  tasks?: TaskStore;
  /** What went wrong opening them, for the log and `/status`. */
  warnings: string[];
  /** Warnings that come and go while running (the database unreachable); read at each `/status`. */
  liveWarnings?: () => readonly string[];
  /**
   * Releases what no single store owns, after the stores are closed (ends the PostgreSQL pool).
   * Idempotent. Absent for SQLite: closing `store` closes the file.
   */
  close?: () => Promise<void>;
}

/**
 * The daemon's one-call setup: opens the database at `path` (or `':memory:'`) and wraps it in
 * the stores. Never throws; when there is no usable database the tool cache is a
 * `NoopToolCacheStore` and `warnings` says why. The warnings are returned, not logged: the
 * caller logs them and shows them in `/status`. Closing `store` closes the file (it owns the
 * connection); closing `oauth` closes only an in-memory fallback of its own.
 */
export function openToolCache(path: string, options: OpenToolCacheOptions = {}): OpenedStores {
  const opened = openDatabase(path, options.logger ? { logger: options.logger } : {});
  const warnings = [...opened.warnings];
  const result = (store: ToolCacheStore, state: StateStore, pins: ToolPinStore = new MemoryToolPinStore()): OpenedStores => {
    const oauth = openOAuthStore(opened, path, warnings, options.logger);
    const agents = openAgentStore(opened, path, warnings, options.logger);
    const audit = openAuditStore(opened.db, opened.readOnly, options.logger);
    const budgets = openBudgetStore(opened, options.logger);
    const tasks = openTaskStore(opened, options.logger);
    return { backend: 'sqlite', store, state, oauth, credentials: oauth.credentials, agents, pins, audit, budgets, tasks, warnings };
  };
  if (!opened.db) return result(new NoopToolCacheStore(), new MemoryStateStore());
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
    return result(new NoopToolCacheStore(), new MemoryStateStore());
  }
  let state: StateStore;
  try {
    state = new SqliteStateStore(opened.db, storeOptions);
  } catch (err) {
    // A read-only file from before the state table: the cache still works, the state is per run.
    warnings.push(`Daemon state kept in memory only: ${path} has no usable daemon_state table (${errorMessage(err)})`);
    state = new MemoryStateStore();
  }
  let pins: ToolPinStore;
  try {
    pins = new SqliteToolPinStore(opened.db, storeOptions);
  } catch (err) {
    warnings.push(`Tool pins kept in memory only: ${path} has no usable tool_pin table (${errorMessage(err)})`);
    pins = new MemoryToolPinStore();
  }
  return result(store, state, pins);
}

/**
 * The OAuth store on the same connection; when that cannot take writes (no database, a
 * read-only file), on an in-memory database instead: sign-ins then last until the daemon stops.
 * The cache's own warning already says the file is unusable, so only a missing table adds one.
 */
function openOAuthStore(opened: ReturnType<typeof openDatabase>, path: string, warnings: string[], logger: StoreLogger | undefined): SqliteOAuthStore {
  const storeOptions = logger ? { logger } : {};
  if (opened.db?.open && !opened.readOnly) {
    try {
      return new SqliteOAuthStore(opened.db, storeOptions);
    } catch (err) {
      warnings.push(`OAuth sign-ins kept in memory only: ${path} has no usable OAuth tables (${errorMessage(err)})`);
    }
  }
  return openMemoryOAuthStore(logger);
}

/** An OAuth store that lasts as long as this process (no usable file, or an embedder's own cache). */
export function openMemoryOAuthStore(logger?: StoreLogger): SqliteOAuthStore {
  const storeOptions = logger ? { logger } : {};
  const memory = openDatabase(':memory:', storeOptions);
  // An in-memory database always opens; the assertion documents that, not a hope.
  return new SqliteOAuthStore(memory.db as NonNullable<typeof memory.db>, { ...storeOptions, ownsConnection: true });
}

/** The agent store on the same connection; in memory when that cannot take writes (agents then last one run). */
function openAgentStore(opened: ReturnType<typeof openDatabase>, path: string, warnings: string[], logger: StoreLogger | undefined): AgentStore {
  if (opened.db?.open && !opened.readOnly) {
    try {
      return new SqliteAgentStore(opened.db, logger ? { logger } : {});
    } catch (err) {
      warnings.push(`Agents kept in memory only: ${path} has no usable agent tables (${errorMessage(err)})`);
    }
  }
  return new MemoryAgentStore();
}

/** Budget counts on the same connection; in memory without a usable file or table. */
function openBudgetStore(opened: ReturnType<typeof openDatabase>, logger: StoreLogger | undefined): BudgetStore {
  if (!opened.db) return new MemoryBudgetStore();
  try {
    return new SqliteBudgetStore(opened.db, { readOnly: opened.readOnly, ...(logger ? { logger } : {}) });
  } catch {
    return new MemoryBudgetStore();
  }
}

function openTaskStore(opened: ReturnType<typeof openDatabase>, logger: StoreLogger | undefined): TaskStore {
  if (!opened.db) return new MemoryTaskStore();
  try {
    return new SqliteTaskStore(opened.db, { readOnly: opened.readOnly, ...(logger ? { logger } : {}) });
  } catch {
    return new MemoryTaskStore();
  }
}
