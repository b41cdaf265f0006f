import type { StateStore } from '../ports.js';
import type { StateRow } from '../store-rows.js';
import { WriteOrder, type PgBackend } from './pg-backend.js';

/**
 * Daemon state in PostgreSQL (`daemon_state`), shared by every replica on the database. What
 * this process last read or wrote is also kept in memory: while the database is away, reads
 * answer from it, and a value that could not be written still holds for this run.
 */
export class PgStateStore implements StateStore {
  readonly #pg: PgBackend;
  readonly #order = new WriteOrder();
  readonly #now: () => number;
  /** Last known value per key; `undefined` remembers a delete. */
  readonly #known = new Map<string, string | undefined>();

  constructor(backend: PgBackend, options: { now?: () => number } = {}) {
    this.#pg = backend;
    this.#now = options.now ?? Date.now;
  }

  get(key: string): Promise<string | undefined> {
    return this.#order.read(async () => {
      const fallback = Symbol('unread');
      const found = await this.#pg.read(
        'state read',
        { key },
        fallback as symbol | string | undefined,
        async () => (await this.#pg.query<StateRow>('SELECT value FROM daemon_state WHERE key = $1', [key])).rows[0]?.value,
      );
      if (found === fallback) return this.#known.get(key);
      const value = found as string | undefined;
      this.#known.set(key, value);
      return value;
    });
  }

  set(key: string, value: string): Promise<void> {
    this.#known.set(key, value);
    const at = this.#now();
    return this.#order.write(async () => {
      await this.#pg.write('state write', { key }, () =>
        this.#pg.query(
          `INSERT INTO daemon_state (key, value, updated_at) VALUES ($1, $2, $3)
           ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
          [key, value, at],
        ),
      );
    });
  }

  delete(key: string): Promise<void> {
    this.#known.set(key, undefined);
    return this.#order.write(async () => {
      await this.#pg.write('state delete', { key }, () => this.#pg.query('DELETE FROM daemon_state WHERE key = $1', [key]));
    });
  }

  /**
   * Inserts `value` unless the key has one, and resolves with the stored value: every replica
   * that claims the same key at once gets the same answer (the insert that loses waits for the
   * winner's commit, then the select reads it). While the database is away: the value this
   * process knows, else `value` (for this run).
   */
  claim(key: string, value: string): Promise<string> {
    const at = this.#now();
    return this.#order.write(async () => {
      const stored = await this.#pg.read('state claim', { key }, undefined as string | undefined, async () => {
        await this.#pg.query('INSERT INTO daemon_state (key, value, updated_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING', [key, value, at]);
        return (await this.#pg.query<StateRow>('SELECT value FROM daemon_state WHERE key = $1', [key])).rows[0]?.value;
      });
      const result = stored ?? this.#known.get(key) ?? value;
      this.#known.set(key, result);
      return result;
    });
  }
}
