import type { Database, Statement } from 'better-sqlite3';
import { errorMessage } from '../errors.js';
import { openDatabase, type StoreLogger } from './db.js';
import type { AuditEntry, AuditQuery, AuditStore, StoredAuditEntry } from './ports.js';
import { AUDIT_INSERT_COLUMNS, auditEntryOf, auditRowValues, type AuditRow, type AuditRowValues } from './store-rows.js';

export type { AuditStore } from './ports.js';

export interface AuditStoreOptions {
  logger?: StoreLogger;
  /** Close the connection on `close()` (an in-memory fallback of its own). @default false */
  ownsConnection?: boolean;
}

/**
 * The audit log in SQLite (`audit_log`, migration 6), beside the other stores on the daemon's
 * connection. A batch is one transaction; the filters of `query` are few, so the statement is
 * built per query from fixed pieces (values always bound, never spliced in).
 */
export class SqliteAuditStore implements AuditStore {
  readonly #db: Database;
  readonly #log: StoreLogger | undefined;
  readonly #ownsConnection: boolean;
  readonly #insert: Statement<AuditRowValues>;
  readonly #trimAge: Statement<[number]>;
  readonly #trimCount: Statement<[number]>;
  readonly #appendAll: (entries: readonly AuditEntry[]) => void;
  #closed = false;

  /** Throws if the `audit_log` table is missing (a read-only file of a version without it). */
  constructor(db: Database, options: AuditStoreOptions = {}) {
    this.#db = db;
    this.#log = options.logger;
    this.#ownsConnection = options.ownsConnection ?? false;
    this.#insert = db.prepare(`
      INSERT INTO audit_log (${AUDIT_INSERT_COLUMNS})
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.#trimAge = db.prepare('DELETE FROM audit_log WHERE ts < ?');
    this.#trimCount = db.prepare(`
      DELETE FROM audit_log WHERE id <= (SELECT id FROM audit_log ORDER BY id DESC LIMIT 1 OFFSET ?)`);
    this.#appendAll = db.transaction((entries: readonly AuditEntry[]) => {
      for (const e of entries) {
        this.#insert.run(...auditRowValues(e));
      }
    });
  }

  async append(entries: readonly AuditEntry[]): Promise<void> {
    if (entries.length === 0 || !this.#open) return;
    try {
      this.#appendAll(entries);
    } catch (err) {
      this.#log?.warn({ entries: entries.length, err: errorMessage(err) }, 'audit write failed');
    }
  }

  async query(query: AuditQuery): Promise<StoredAuditEntry[]> {
    if (!this.#open) return [];
    const where: string[] = [];
    const params: Array<string | number> = [];
    const filter = (column: string, value: string | number | undefined, op = '='): void => {
      if (value === undefined) return;
      where.push(`${column} ${op} ?`);
      params.push(value);
    };
    filter('agent', query.agent);
    filter('server', query.server);
    filter('name', query.name);
    filter('outcome', query.outcome);
    filter('ts', query.since, '>=');
    filter('run_id', query.runId);
    const sql = `SELECT * FROM audit_log ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
    try {
      return (this.#db.prepare(sql).all(...params, query.limit) as AuditRow[]).map(auditEntryOf);
    } catch (err) {
      this.#log?.warn({ err: errorMessage(err) }, 'audit read failed');
      return [];
    }
  }

  async trim(before: number, maxRows: number): Promise<number> {
    if (!this.#open) return 0;
    try {
      return this.#trimAge.run(before).changes + this.#trimCount.run(maxRows).changes;
    } catch (err) {
      this.#log?.warn({ err: errorMessage(err) }, 'audit trim failed');
      return 0;
    }
  }

  /** Reads are empty and writes dropped from here on (ports.ts); the connection closes only if it is ours. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#ownsConnection && this.#db.open) this.#db.close();
  }

  get #open(): boolean {
    return !this.#closed && this.#db.open;
  }
}

/**
 * The audit store on the daemon's connection when it takes writes; otherwise on an in-memory
 * database that lasts as long as this process (no usable file, an embedder's own cache).
 */
export function openAuditStore(db: Database | undefined, readOnly: boolean, logger?: StoreLogger): AuditStore {
  const options = logger ? { logger } : {};
  if (db?.open && !readOnly) {
    try {
      return new SqliteAuditStore(db, options);
    } catch (err) {
      logger?.warn({ err: errorMessage(err) }, 'audit log kept in memory only');
    }
  }
  const memory = openDatabase(':memory:', options);
  // An in-memory database always opens; the assertion documents that, not a hope.
  return new SqliteAuditStore(memory.db as NonNullable<typeof memory.db>, { ...options, ownsConnection: true });
}
