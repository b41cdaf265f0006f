import type { Tool } from '@modelcontextprotocol/client';
import type { Database, Statement } from 'better-sqlite3';
import { errorMessage } from '../errors.js';
import type { StoreLogger } from './db.js';
import { CACHE_FORMAT_VERSION, type CachedToolList, type ListHints, type StoredVerdict, type ToolCacheStore } from './ports.js';
import { cachedToolListOf, verdictOf, type ToolCacheRow, type VerdictRow } from './store-rows.js';

// Callers outside the store import the port from here too: the implementation sits beside it.
export { CACHE_FORMAT_VERSION, CACHE_MAX_AGE_MS, type CachedToolList, type ListHints, type StoredVerdict, type ToolCacheStore } from './ports.js';

export interface SqliteToolCacheStoreOptions {
  /** Skip writes; set when the database was opened read-only. @default false */
  readOnly?: boolean;
  logger?: StoreLogger;
  /** @default Date.now */
  now?: () => number;
}

/**
 * The SQLite tool cache. It owns the connection it is given: `close()` closes it. Each method
 * runs its statement at the call, so a write is in the file before the call returns.
 */
export class SqliteToolCacheStore implements ToolCacheStore {
  private readonly selectRow: Statement<[string], ToolCacheRow>;
  private readonly upsertRow: Statement<[string, string, number, string, number, number, string | null]>;
  private readonly deleteRow: Statement<[string]>;
  private readonly selectVerdict: Statement<[string], VerdictRow>;
  private readonly upsertVerdict: Statement<[string, string, string, number]>;
  private readonly deleteVerdictRow: Statement<[string]>;
  private readonly readOnly: boolean;
  private readonly log: StoreLogger | undefined;
  private readonly now: () => number;

  /** Throws if the schema is missing; `openToolCache` turns that into a no-op store. */
  constructor(
    private readonly db: Database,
    options: SqliteToolCacheStoreOptions = {},
  ) {
    this.readOnly = options.readOnly ?? false;
    this.log = options.logger;
    this.now = options.now ?? Date.now;
    this.selectRow = db.prepare('SELECT config_hash, format_version, tools_json, cached_at, hints_json FROM tool_cache WHERE server = ?');
    this.upsertRow = db.prepare(`
      INSERT INTO tool_cache (server, config_hash, format_version, tools_json, tool_count, cached_at, hints_json)
      VALUES (?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (server) DO UPDATE SET
        config_hash = excluded.config_hash,
        format_version = excluded.format_version,
        tools_json = excluded.tools_json,
        tool_count = excluded.tool_count,
        cached_at = excluded.cached_at,
        hints_json = excluded.hints_json
    `);
    this.deleteRow = db.prepare('DELETE FROM tool_cache WHERE server = ?');
    this.selectVerdict = db.prepare('SELECT config_hash, verdict_json, probed_at FROM protocol_verdict WHERE server = ?');
    this.upsertVerdict = db.prepare(`
      INSERT INTO protocol_verdict (server, config_hash, verdict_json, probed_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (server) DO UPDATE SET
        config_hash = excluded.config_hash, verdict_json = excluded.verdict_json, probed_at = excluded.probed_at
    `);
    this.deleteVerdictRow = db.prepare('DELETE FROM protocol_verdict WHERE server = ?');
  }

  async get(server: string, configHash: string): Promise<CachedToolList | undefined> {
    if (!this.db.open) return undefined;
    let row: ToolCacheRow | undefined;
    try {
      row = this.selectRow.get(server);
    } catch (err) {
      this.log?.warn({ server, err: errorMessage(err) }, 'tool cache read failed');
      return undefined;
    }
    const cached = cachedToolListOf(row, server, configHash, this.now());
    return typeof cached === 'string' ? this.miss(server, cached) : cached;
  }

  async put(server: string, configHash: string, tools: readonly Tool[], hints?: ListHints): Promise<void> {
    if (tools.length === 0) {
      this.#delete(server);
      return;
    }
    if (this.skipWrite(server)) return;
    try {
      const hintsJson = hints && Object.keys(hints).length > 0 ? JSON.stringify(hints) : null;
      this.upsertRow.run(server, configHash, CACHE_FORMAT_VERSION, JSON.stringify(tools), tools.length, this.now(), hintsJson);
    } catch (err) {
      this.log?.warn({ server, err: errorMessage(err) }, 'tool cache write failed');
    }
  }

  async delete(server: string): Promise<void> {
    this.#delete(server);
  }

  #delete(server: string): void {
    if (this.skipWrite(server)) return;
    try {
      this.deleteRow.run(server);
    } catch (err) {
      this.log?.warn({ server, err: errorMessage(err) }, 'tool cache delete failed');
    }
  }

  async getVerdict(server: string, configHash: string): Promise<StoredVerdict | undefined> {
    if (!this.db.open) return undefined;
    try {
      return verdictOf(this.selectVerdict.get(server), configHash);
    } catch (err) {
      this.log?.warn({ server, err: errorMessage(err) }, 'protocol verdict read failed');
      return undefined;
    }
  }

  async putVerdict(server: string, configHash: string, verdict: StoredVerdict['verdict']): Promise<void> {
    if (this.skipWrite(server)) return;
    try {
      this.upsertVerdict.run(server, configHash, JSON.stringify(verdict), this.now());
    } catch (err) {
      this.log?.warn({ server, err: errorMessage(err) }, 'protocol verdict write failed');
    }
  }

  async deleteVerdict(server: string): Promise<void> {
    if (this.skipWrite(server)) return;
    try {
      this.deleteVerdictRow.run(server);
    } catch (err) {
      this.log?.warn({ server, err: errorMessage(err) }, 'protocol verdict delete failed');
    }
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  private skipWrite(server: string): boolean {
    // The read-only state was reported once, when the database was opened.
    if (this.readOnly) this.log?.debug({ server }, 'tool cache is read-only; not written');
    return this.readOnly || !this.db.open;
  }

  private miss(server: string, reason: string): undefined {
    this.log?.debug({ server, reason }, 'tool cache miss');
    return undefined;
  }
}

/** The store used when there is no database: everything misses, nothing is kept. */
export class NoopToolCacheStore implements ToolCacheStore {
  async get(): Promise<CachedToolList | undefined> {
    return undefined;
  }

  async put(): Promise<void> {}

  async delete(): Promise<void> {}

  async getVerdict(): Promise<StoredVerdict | undefined> {
    return undefined;
  }

  async putVerdict(): Promise<void> {}

  async deleteVerdict(): Promise<void> {}

  async close(): Promise<void> {}
}
