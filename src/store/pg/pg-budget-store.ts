import { MemoryBudgetStore } from '../budget-store.js';
import type { BudgetStore } from '../ports.js';
import { budgetCounts, type BudgetRow } from '../store-rows.js';
import type { PgBackend } from './pg-backend.js';

/** Windows older than this are deleted as new ones are counted. */
const KEEP_MS = 2 * 24 * 60 * 60 * 1000;
/** Reads remembered for an outage, at most. */
const MAX_SEEN = 4096;

/**
 * `budget_usage` in PostgreSQL (issue #38): every replica adds to the same rows, so an agent's
 * budget is one across the cluster. An add is one statement per window (`tokens = tokens + n`,
 * atomic under concurrent replicas) answering the new counts. While the database is away the
 * counts go to memory and are added to what it answers once it is back, and reads answer the
 * counts last read (plus those): a budget spent before the outage stays spent during it.
 */
export class PgBudgetStore implements BudgetStore {
  readonly #pg: PgBackend;
  readonly #memory = new MemoryBudgetStore();
  /** The counts last read per agent and windows: answered while the database is away, so a spent budget stays spent (issue #43). */
  readonly #seen = new Map<string, BudgetRow[]>();

  constructor(backend: PgBackend) {
    this.#pg = backend;
  }

  async add(agent: string, windows: readonly string[], tokens: number, now: number): Promise<Record<string, number>> {
    let counts: Record<string, number> | undefined;
    const kept = await this.#pg.write('budget count write', { agent }, async () => {
      const { rows } = await this.#pg.query<BudgetRow>(
        `INSERT INTO budget_usage (agent, "window", tokens, updated_at) SELECT $1, w, $3, $4 FROM unnest($2::text[]) AS w
         ON CONFLICT (agent, "window") DO UPDATE SET tokens = budget_usage.tokens + excluded.tokens, updated_at = excluded.updated_at
         RETURNING "window", tokens`,
        [agent, windows, tokens, now],
      );
      counts = budgetCounts(rows, windows);
      this.#seen.set(seenKey(agent, windows), rows);
      await this.#pg.query('DELETE FROM budget_usage WHERE updated_at < $1', [now - KEEP_MS]);
    });
    if (!kept || !counts) {
      await this.#memory.add(agent, windows, tokens);
      return this.spent(agent, windows);
    }
    const unwritten = await this.#memory.spent(agent, windows);
    return Object.fromEntries(windows.map((window) => [window, (counts?.[window] ?? 0) + (unwritten[window] ?? 0)]));
  }

  async spent(agent: string, windows: readonly string[]): Promise<Record<string, number>> {
    // Bounded: windows turn every hour, so the oldest reads go first.
    if (this.#seen.size >= MAX_SEEN) this.#seen.delete(this.#seen.keys().next().value as string);
    const rows = await this.#pg.recall(this.#seen, seenKey(agent, windows), 'budget count read', { agent }, [] as BudgetRow[], async () =>
      (await this.#pg.query<BudgetRow>('SELECT "window", tokens FROM budget_usage WHERE agent = $1 AND "window" = ANY($2::text[])', [agent, windows])).rows,
    );
    const counts = budgetCounts(rows, windows);
    const unwritten = await this.#memory.spent(agent, windows);
    return Object.fromEntries(windows.map((window) => [window, (counts[window] ?? 0) + (unwritten[window] ?? 0)]));
  }
}

function seenKey(agent: string, windows: readonly string[]): string {
  return JSON.stringify([agent, windows]);
}
