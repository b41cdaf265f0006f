import type { Tool } from '@modelcontextprotocol/client';
import { CACHE_FORMAT_VERSION, type CachedToolList, type ListHints, type StoredVerdict, type ToolCacheStore } from '../ports.js';
import { cachedToolListOf, verdictOf, type ToolCacheRow, type VerdictRow } from '../store-rows.js';
import { WriteOrder, type PgBackend } from './pg-backend.js';

/**
 * The tool cache and era verdicts in PostgreSQL (tables `tool_cache`, `protocol_verdict`), with
 * the SQLite store's rules: a failing read misses, a failing write is logged by server (the
 * servers' tools are in the manager's memory meanwhile). Closing it does not end the pool.
 */
export class PgToolCacheStore implements ToolCacheStore {
  readonly #pg: PgBackend;
  readonly #order = new WriteOrder();
  readonly #now: () => number;
  #closed = false;

  constructor(backend: PgBackend, options: { now?: () => number } = {}) {
    this.#pg = backend;
    this.#now = options.now ?? Date.now;
  }

  get(server: string, configHash: string): Promise<CachedToolList | undefined> {
    return this.#order.read(async () => {
      if (this.#closed) return undefined;
      const row = await this.#pg.read(
        'tool cache read',
        { server },
        undefined,
        async () =>
          (await this.#pg.query<ToolCacheRow>('SELECT config_hash, format_version, tools_json, cached_at, hints_json FROM tool_cache WHERE server = $1', [server])).rows[0],
      );
      const cached = cachedToolListOf(row, server, configHash, this.#now());
      return typeof cached === 'string' ? undefined : cached;
    });
  }

  put(server: string, configHash: string, tools: readonly Tool[], hints?: ListHints): Promise<void> {
    if (tools.length === 0) return this.delete(server);
    const hintsJson = hints && Object.keys(hints).length > 0 ? JSON.stringify(hints) : null;
    const toolsJson = JSON.stringify(tools);
    const cachedAt = this.#now();
    return this.#write(
      'tool cache write',
      server,
      `
      INSERT INTO tool_cache (server, config_hash, format_version, tools_json, tool_count, cached_at, hints_json)
      VALUES ($1, $2, $3, $4, $5, $6, $7)
      ON CONFLICT (server) DO UPDATE SET
        config_hash = excluded.config_hash, format_version = excluded.format_version, tools_json = excluded.tools_json,
        tool_count = excluded.tool_count, cached_at = excluded.cached_at, hints_json = excluded.hints_json`,
      [server, configHash, CACHE_FORMAT_VERSION, toolsJson, tools.length, cachedAt, hintsJson],
    );
  }

  delete(server: string): Promise<void> {
    return this.#write('tool cache delete', server, 'DELETE FROM tool_cache WHERE server = $1', [server]);
  }

  getVerdict(server: string, configHash: string): Promise<StoredVerdict | undefined> {
    return this.#order.read(async () => {
      if (this.#closed) return undefined;
      const row = await this.#pg.read(
        'protocol verdict read',
        { server },
        undefined,
        async () => (await this.#pg.query<VerdictRow>('SELECT config_hash, verdict_json, probed_at FROM protocol_verdict WHERE server = $1', [server])).rows[0],
      );
      return verdictOf(row, configHash);
    });
  }

  putVerdict(server: string, configHash: string, verdict: StoredVerdict['verdict']): Promise<void> {
    const probedAt = this.#now();
    return this.#write(
      'protocol verdict write',
      server,
      `
      INSERT INTO protocol_verdict (server, config_hash, verdict_json, probed_at) VALUES ($1, $2, $3, $4)
      ON CONFLICT (server) DO UPDATE SET
        config_hash = excluded.config_hash, verdict_json = excluded.verdict_json, probed_at = excluded.probed_at`,
      [server, configHash, JSON.stringify(verdict), probedAt],
    );
  }

  deleteVerdict(server: string): Promise<void> {
    return this.#write('protocol verdict delete', server, 'DELETE FROM protocol_verdict WHERE server = $1', [server]);
  }

  /** Stops this store (reads miss, writes drop) once its writes in flight are done; the pool stays. */
  async close(): Promise<void> {
    await this.#order.drained();
    this.#closed = true;
  }

  #write(what: string, server: string, sql: string, params: unknown[]): Promise<void> {
    return this.#order.write(async () => {
      if (this.#closed) return;
      await this.#pg.write(what, { server }, () => this.#pg.query(sql, params));
    });
  }
}
