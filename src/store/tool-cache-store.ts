import type { Tool } from '@modelcontextprotocol/client';
import type { Database, Statement } from 'better-sqlite3';
import { errorMessage } from '../errors.js';
import type { StoreLogger } from './db.js';
import { CACHE_FORMAT_VERSION, CACHE_MAX_AGE_MS, type CachedToolList, type ListHints, type StoredVerdict, type ToolCacheStore } from './ports.js';

// Callers outside the store import the port from here too: the implementation sits beside it.
export { CACHE_FORMAT_VERSION, CACHE_MAX_AGE_MS, type CachedToolList, type ListHints, type StoredVerdict, type ToolCacheStore } from './ports.js';

export interface SqliteToolCacheStoreOptions {
  /** Skip writes; set when the database was opened read-only. @default false */
  readOnly?: boolean;
  logger?: StoreLogger;
  /** @default Date.now */
  now?: () => number;
}

interface Row {
  config_hash: string;
  format_version: number;
  tools_json: string;
  cached_at: number;
  hints_json: string | null;
}

interface VerdictRow {
  config_hash: string;
  verdict_json: string;
  probed_at: number;
}

/**
 * The SQLite tool cache. It owns the connection it is given: `close()` closes it. Each method
 * runs its statement at the call, so a write is in the file before the call returns.
 */
export class SqliteToolCacheStore implements ToolCacheStore {
  private readonly selectRow: Statement<[string], Row>;
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
    this.selectRow = db.prepare(
      'SELECT config_hash, format_version, tools_json, cached_at, hints_json FROM tool_cache WHERE server = ?',
    );
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
    let row: Row | undefined;
    try {
      row = this.selectRow.get(server);
    } catch (err) {
      this.log?.warn({ server, err: errorMessage(err) }, 'tool cache read failed');
      return undefined;
    }
    if (!row) return this.miss(server, 'absent');
    if (row.format_version !== CACHE_FORMAT_VERSION) return this.miss(server, 'format version');
    if (row.config_hash !== configHash) return this.miss(server, 'config changed');
    if (this.now() - row.cached_at > CACHE_MAX_AGE_MS) return this.miss(server, 'expired');
    const tools = parseTools(row.tools_json);
    if (!tools) return this.miss(server, 'unreadable');
    if (tools.length === 0) return this.miss(server, 'empty');
    const hints = parseHints(row.hints_json);
    return { server, configHash, formatVersion: row.format_version, tools, cachedAt: row.cached_at, ...(hints ? { hints } : {}) };
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
      const row = this.selectVerdict.get(server);
      if (!row || row.config_hash !== configHash) return undefined;
      const verdict = parseVerdict(row.verdict_json);
      return verdict ? { verdict, probedAt: row.probed_at } : undefined;
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

/** Shared with the PostgreSQL store: the same stored text means the same thing. */
export function parseHints(json: string | null): ListHints | undefined {
  if (json === null) return undefined;
  try {
    const value = JSON.parse(json) as Record<string, unknown>;
    const hints: ListHints = {};
    if (typeof value.ttlMs === 'number' && value.ttlMs >= 0) hints.ttlMs = value.ttlMs;
    if (value.cacheScope === 'public' || value.cacheScope === 'private') hints.cacheScope = value.cacheScope;
    return hints;
  } catch {
    return undefined;
  }
}

export function parseVerdict(json: string): StoredVerdict['verdict'] | undefined {
  try {
    const value = JSON.parse(json) as { kind?: unknown; discover?: unknown };
    if (value.kind === 'legacy') return { kind: 'legacy' };
    if (value.kind === 'modern' && typeof value.discover === 'object' && value.discover !== null) {
      return { kind: 'modern', discover: value.discover as Record<string, unknown> };
    }
    return undefined;
  } catch {
    return undefined;
  }
}

/** A row is only as trustworthy as the file; anything but an array of named tools is a miss. */
export function parseTools(json: string): Tool[] | undefined {
  try {
    const value: unknown = JSON.parse(json);
    if (!Array.isArray(value)) return undefined;
    const named = value.every((tool) => typeof (tool as { name?: unknown } | null)?.name === 'string');
    return named ? (value as Tool[]) : undefined;
  } catch {
    return undefined;
  }
}
