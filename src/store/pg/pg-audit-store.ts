import type { AuditEntry, AuditQuery, AuditStore, StoredAuditEntry } from '../ports.js';
import { WriteOrder, type PgBackend } from './pg-backend.js';
import { AUDIT_INSERT_COLUMNS, auditEntryOf, auditRowValues, type AuditRow } from '../store-rows.js';

const COLUMNS = AUDIT_INSERT_COLUMNS.split(',').length;
const MAX_ROWS = 1000;

/**
 * The audit log in PostgreSQL (`audit_log`): every replica appends to one log, so a query on
 * any replica sees the cluster's calls. A batch is one multi-row insert; retention runs
 * wherever the log's timer fires (trimming twice is harmless).
 */
export class PgAuditStore implements AuditStore {
  readonly #pg: PgBackend;
  readonly #order = new WriteOrder();
  #closed = false;

  constructor(backend: PgBackend) {
    this.#pg = backend;
  }

  append(entries: readonly AuditEntry[]): Promise<void> {
    if (entries.length === 0) return Promise.resolve();
    // PostgreSQL binds at most 65 535 parameters per statement.
    if (entries.length > MAX_ROWS) {
      const parts: Array<Promise<void>> = [];
      for (let start = 0; start < entries.length; start += MAX_ROWS) parts.push(this.append(entries.slice(start, start + MAX_ROWS)));
      return Promise.all(parts).then(() => undefined);
    }
    const params = entries.flatMap(auditRowValues);
    const rows = entries.map((_, row) => `(${Array.from({ length: COLUMNS }, (_v, col) => `$${row * COLUMNS + col + 1}`).join(', ')})`);
    return this.#order.write(async () => {
      if (this.#closed) return;
      await this.#pg.write('audit write', { entries: entries.length }, () =>
        this.#pg.query(
          `INSERT INTO audit_log (${AUDIT_INSERT_COLUMNS})
           VALUES ${rows.join(', ')}`,
          params,
        ),
      );
    });
  }

  query(query: AuditQuery): Promise<StoredAuditEntry[]> {
    const where: string[] = [];
    const params: Array<string | number> = [];
    const filter = (column: string, value: string | number | undefined, op = '='): void => {
      if (value === undefined) return;
      params.push(value);
      where.push(`${column} ${op} $${params.length}`);
    };
    filter('agent', query.agent);
    filter('server', query.server);
    filter('name', query.name);
    filter('outcome', query.outcome);
    filter('ts', query.since, '>=');
    filter('run_id', query.runId);
    params.push(query.limit);
    const sql = `SELECT * FROM audit_log ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${params.length}`;
    return this.#order.read(async () => {
      if (this.#closed) return [];
      return this.#pg.read('audit read', {}, [] as StoredAuditEntry[], async () => (await this.#pg.query<AuditRow>(sql, params)).rows.map(auditEntryOf));
    });
  }

  trim(before: number, maxRows: number): Promise<number> {
    return this.#order.write(async () => {
      if (this.#closed) return 0;
      return this.#pg.read('audit trim', {}, 0, async () => {
        const byAge = await this.#pg.query('DELETE FROM audit_log WHERE ts < $1', [before]);
        const byCount = await this.#pg.query('DELETE FROM audit_log WHERE id <= (SELECT id FROM audit_log ORDER BY id DESC LIMIT 1 OFFSET $1)', [maxRows]);
        return (byAge.rowCount ?? 0) + (byCount.rowCount ?? 0);
      });
    });
  }

  async close(): Promise<void> {
    await this.#order.drained();
    this.#closed = true;
  }
}
