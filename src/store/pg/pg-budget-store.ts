import { MemoryBudgetStore } from '../budget-store.js';
import type { BudgetStore } from '../ports.js';
import { budgetCounts, type BudgetRow } from '../store-rows.js';
import type { PgBackend } from './pg-backend.js';

/** Windows older than this are deleted as new ones are counted. */
const KEEP_MS = 2 * 24 * 60 * 60 * 1000;
/** Reads remembered for an outage, at most. */
const MAX_SEEN = 4096;
/** Adds `$3` tokens to each of agent `$1`'s windows `$2` (`$4` = now), answering the new counts. */
const ADD = `INSERT INTO budget_usage (agent, "window", tokens, updated_at) SELECT $1, w, $3, $4 FROM unnest($2::text[]) AS w
         ON CONFLICT (agent, "window") DO UPDATE SET tokens = budget_usage.tokens + excluded.tokens, updated_at = excluded.updated_at
         RETURNING "window", tokens`;

/**
 * `budget_usage` in PostgreSQL (issue #38): every replica adds to the same rows, so an agent's
 * budget is one across the cluster. An add is one statement per window (`tokens = tokens + n`,
 * atomic under concurrent replicas) answering the new counts. While the database is away the
 * counts go to memory, and reads answer the counts last read plus those: a budget spent before the
 * outage stays spent during it. Once the database is back (the outage's end, or any add it
 * keeps) the counts in memory are written to it, so the other replicas see what was spent while
 * it was away (issue #43).
 */
export class PgBudgetStore implements BudgetStore {
  readonly #pg: PgBackend;
  readonly #memory = new MemoryBudgetStore();
  /** The counts last read per agent and windows: answered while the database is away, so a spent budget stays spent (issue #43). */
  readonly #seen = new Map<string, BudgetRow[]>();
  /** The time of the latest add: what a charge-back writes as the rows' `updated_at`. */
  #lastNow = 0;
  #charging: Promise<void> | undefined;

  constructor(backend: PgBackend) {
    this.#pg = backend;
    backend.onReachable(() => void this.chargeBack());
  }

  async add(agent: string, windows: readonly string[], tokens: number, now: number): Promise<Record<string, number>> {
    let counts: Record<string, number> | undefined;
    this.#lastNow = Math.max(this.#lastNow, now);
    const kept = await this.#pg.write('budget count write', { agent }, async () => {
      const { rows } = await this.#pg.query<BudgetRow>(ADD, [agent, windows, tokens, now]);
      counts = budgetCounts(rows, windows);
      this.#seen.set(seenKey(agent, windows), rows);
      await this.#pg.query('DELETE FROM budget_usage WHERE updated_at < $1', [now - KEEP_MS]);
    });
    // Kept in memory only when the add itself was not written (a failed trim after it was).
    if (!kept && counts === undefined) {
      await this.#memory.add(agent, windows, tokens);
      return this.spent(agent, windows);
    }
    const unwritten = await this.#memory.spent(agent, windows);
    if (this.#memory.entries().length > 0) void this.chargeBack();
    return Object.fromEntries(windows.map((window) => [window, (counts?.[window] ?? 0) + (unwritten[window] ?? 0)]));
  }

  /**
   * Writes the counts kept in memory while the database was away, one window at a time, each
   * taken off memory once written: none is lost, none written twice by this process. Stops at
   * the first write not kept (the database gone again: the next return retries). Joinable.
   */
  chargeBack(): Promise<void> {
    // Cleared in a later microtask, never inside the pass: a pass with nothing to write finishes
    // without an await, and cleared from within it, `#charging` was then set to that finished
    // pass for good, so no later return wrote anything again.
    this.#charging ??= this.#writeKept().finally(() => {
      this.#charging = undefined;
    });
    return this.#charging;
  }

  async #writeKept(): Promise<void> {
    for (const { agent, window, tokens } of this.#memory.entries()) {
      const kept = await this.#pg.write('budget charge-back', { agent }, () => this.#pg.query(ADD, [agent, [window], tokens, this.#lastNow]));
      if (!kept) return;
      this.#memory.subtract(agent, window, tokens);
      this.#pg.log?.debug({ agent, window, tokens }, 'budget tokens spent while the store was away written to it');
    }
  }

  async spent(agent: string, windows: readonly string[]): Promise<Record<string, number>> {
    // Bounded: windows turn every hour, so the oldest reads go first.
    if (this.#seen.size >= MAX_SEEN) this.#seen.delete(this.#seen.keys().next().value as string);
    const rows = await this.#pg.recall(
      this.#seen,
      seenKey(agent, windows),
      'budget count read',
      { agent },
      [] as BudgetRow[],
      async () => (await this.#pg.query<BudgetRow>('SELECT "window", tokens FROM budget_usage WHERE agent = $1 AND "window" = ANY($2::text[])', [agent, windows])).rows,
    );
    const counts = budgetCounts(rows, windows);
    const unwritten = await this.#memory.spent(agent, windows);
    return Object.fromEntries(windows.map((window) => [window, (counts[window] ?? 0) + (unwritten[window] ?? 0)]));
  }
}

function seenKey(agent: string, windows: readonly string[]): string {
  return JSON.stringify([agent, windows]);
}
