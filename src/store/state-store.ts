import type { Database, Statement } from 'better-sqlite3';
import { errorMessage } from '../errors.js';
import type { StoreLogger } from './db.js';
import type { StateStore } from './ports.js';
import type { StateRow } from './store-rows.js';

export type { StateStore } from './ports.js';

/** Values kept in this process only: the store when there is no database. */
export class MemoryStateStore implements StateStore {
  private readonly values = new Map<string, string>();

  async get(key: string): Promise<string | undefined> {
    return this.values.get(key);
  }

  async set(key: string, value: string): Promise<void> {
    this.values.set(key, value);
  }

  async delete(key: string): Promise<void> {
    this.values.delete(key);
  }

  async claim(key: string, value: string): Promise<string> {
    if (!this.values.has(key)) this.values.set(key, value);
    return this.values.get(key) as string;
  }
}

/**
 * The SQLite state store, beside the tool cache in the same database. It shares the connection
 * the tool cache owns and never closes it. A value it could not write (read-only file, closed
 * connection, failing statement) is kept in memory for this run.
 */
export class SqliteStateStore implements StateStore {
  private readonly memory = new Map<string, string>();
  private readonly selectValue: Statement<[string], StateRow>;
  private readonly upsertValue: Statement<[string, string, number]>;
  private readonly deleteValue: Statement<[string]>;
  private readonly insertValue: Statement<[string, string, number]>;

  /** Throws if the `daemon_state` table is missing (a database of a version without it). */
  constructor(
    private readonly db: Database,
    private readonly options: { readOnly?: boolean; logger?: StoreLogger; now?: () => number } = {},
  ) {
    this.selectValue = db.prepare('SELECT value FROM daemon_state WHERE key = ?');
    this.upsertValue = db.prepare(`
      INSERT INTO daemon_state (key, value, updated_at) VALUES (?, ?, ?)
      ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
    `);
    this.deleteValue = db.prepare('DELETE FROM daemon_state WHERE key = ?');
    this.insertValue = db.prepare('INSERT INTO daemon_state (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING');
  }

  async get(key: string): Promise<string | undefined> {
    const kept = this.memory.get(key);
    if (kept !== undefined || !this.db.open) return kept;
    try {
      return this.selectValue.get(key)?.value;
    } catch (err) {
      this.options.logger?.warn({ key, err: errorMessage(err) }, 'state read failed');
      return undefined;
    }
  }

  async set(key: string, value: string): Promise<void> {
    this.memory.set(key, value);
    if (this.options.readOnly || !this.db.open) return;
    try {
      this.upsertValue.run(key, value, (this.options.now ?? Date.now)());
    } catch (err) {
      this.options.logger?.warn({ key, err: errorMessage(err) }, 'state write failed');
    }
  }

  async delete(key: string): Promise<void> {
    this.memory.delete(key);
    if (this.options.readOnly || !this.db.open) return;
    try {
      this.deleteValue.run(key);
    } catch (err) {
      this.options.logger?.warn({ key, err: errorMessage(err) }, 'state delete failed');
    }
  }

  async claim(key: string, value: string): Promise<string> {
    if (!this.options.readOnly && this.db.open) {
      try {
        // Insert-or-keep then read, in one transaction: another process's claim is either
        // before it (kept) or after it (finds ours).
        const stored = this.db
          .transaction(() => {
            this.insertValue.run(key, value, (this.options.now ?? Date.now)());
            return this.selectValue.get(key)?.value;
          })
          .immediate();
        if (stored !== undefined) {
          this.memory.set(key, stored);
          return stored;
        }
      } catch (err) {
        this.options.logger?.warn({ key, err: errorMessage(err) }, 'state claim failed');
      }
    } else if (!this.memory.has(key) && this.db.open) {
      // Read-only: a value already in the file still wins over a new one.
      try {
        const stored = this.selectValue.get(key)?.value;
        if (stored !== undefined) this.memory.set(key, stored);
      } catch (err) {
        this.options.logger?.warn({ key, err: errorMessage(err) }, 'state read failed');
      }
    }
    if (!this.memory.has(key)) this.memory.set(key, value);
    return this.memory.get(key) as string;
  }
}
