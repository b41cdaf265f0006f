import type { Database, Statement } from 'better-sqlite3';
import { errorMessage } from '../errors.js';
import type { StoreLogger } from './db.js';
import type { BudgetStore } from './ports.js';
import { budgetCounts, type BudgetRow } from './store-rows.js';

export type { BudgetStore } from './ports.js';

/** Counts kept in this process only: the store without a usable database (one replica's counts). */
export class MemoryBudgetStore implements BudgetStore {
  readonly #counts = new Map<string, number>();

  async add(agent: string, windows: readonly string[], tokens: number): Promise<Record<string, number>> {
    for (const window of windows) this.#counts.set(`${agent}\u0000${window}`, (this.#counts.get(`${agent}\u0000${window}`) ?? 0) + tokens);
    return this.spent(agent, windows);
  }

  async spent(agent: string, windows: readonly string[]): Promise<Record<string, number>> {
    return Object.fromEntries(windows.map((window) => [window, this.#counts.get(`${agent}\u0000${window}`) ?? 0]));
  }

  /** Every count held here: what a store writes to its database once it can (issue #43). */
  entries(): Array<{ agent: string; window: string; tokens: number }> {
    return [...this.#counts].map(([key, tokens]) => {
      const [agent = '', window = ''] = key.split('\u0000');
      return { agent, window, tokens };
    });
  }

  /** Takes `tokens` off a count (once they are written elsewhere); a count that reaches 0 is gone. */
  subtract(agent: string, window: string, tokens: number): void {
    const key = `${agent}\u0000${window}`;
    const left = (this.#counts.get(key) ?? 0) - tokens;
    if (left > 0) this.#counts.set(key, left);
    else this.#counts.delete(key);
  }
}

/** Windows older than this are deleted as new ones are counted: a day window is the longest read. */
const KEEP_MS = 2 * 24 * 60 * 60 * 1000;

/**
 * `budget_usage` in the SQLite file: the counts survive a restart. A count it could not write is
 * kept in memory for the run and added to what the file says.
 */
export class SqliteBudgetStore implements BudgetStore {
  readonly #memory = new MemoryBudgetStore();
  readonly #upsert: Statement<[string, string, number, number]>;
  readonly #select: Statement<[string, string], BudgetRow>;
  readonly #trim: Statement<[number]>;
  readonly #add: (agent: string, windows: readonly string[], tokens: number, now: number) => void;

  /** Throws if the `budget_usage` table is missing (a database of a version without it). */
  constructor(
    private readonly db: Database,
    private readonly options: { readOnly?: boolean; logger?: StoreLogger } = {},
  ) {
    this.#upsert = db.prepare(
      'INSERT INTO budget_usage (agent, window, tokens, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (agent, window) DO UPDATE SET tokens = tokens + excluded.tokens, updated_at = excluded.updated_at',
    );
    this.#select = db.prepare('SELECT window, tokens FROM budget_usage WHERE agent = ? AND window IN (SELECT value FROM json_each(?))');
    this.#trim = db.prepare('DELETE FROM budget_usage WHERE updated_at < ?');
    this.#add = db.transaction((agent: string, windows: readonly string[], tokens: number, now: number) => {
      for (const window of windows) this.#upsert.run(agent, window, tokens, now);
      this.#trim.run(now - KEEP_MS);
    });
  }

  async add(agent: string, windows: readonly string[], tokens: number, now: number): Promise<Record<string, number>> {
    if (this.db.open && this.options.readOnly !== true) {
      try {
        this.#add(agent, windows, tokens, now);
        return this.spent(agent, windows);
      } catch (err) {
        this.options.logger?.warn({ agent, err: errorMessage(err) }, 'budget count write failed');
      }
    }
    await this.#memory.add(agent, windows, tokens);
    return this.spent(agent, windows);
  }

  async spent(agent: string, windows: readonly string[]): Promise<Record<string, number>> {
    let counts = budgetCounts([], windows);
    if (this.db.open) {
      try {
        counts = budgetCounts(this.#select.all(agent, JSON.stringify(windows)), windows);
      } catch (err) {
        this.options.logger?.warn({ agent, err: errorMessage(err) }, 'budget count read failed');
      }
    }
    const unwritten = await this.#memory.spent(agent, windows);
    return Object.fromEntries(windows.map((window) => [window, (counts[window] ?? 0) + (unwritten[window] ?? 0)]));
  }
}
