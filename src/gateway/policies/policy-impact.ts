import type { Clock } from '../../util/clock.js';

/** One request a shadow rule would have denied (or held), as `GET /policies/impact` counts it. */
export interface WouldDeny {
  /** The id of the would-be denial, also in the log line: an example the operator can look up. */
  id: string;
  rule: string;
  effect: 'deny' | 'approve';
  /** '' for the operator and without keys. */
  agent: string;
  server: string;
  /** The exposed tool or prompt name, or the resource URI. */
  name: string;
  /** ms since the epoch. */
  at: number;
}

/** A sum of `GET /policies/impact`: one rule × agent × tool. */
export interface ImpactRow {
  rule: string;
  effect: 'deny' | 'approve';
  agent: string;
  server: string;
  name: string;
  count: number;
  /** ISO times of the first and last would-be denial in the window. */
  first: string;
  last: string;
  /** The ids of the latest few (newest first). */
  examples: string[];
}

/** Would-be denials kept, the oldest dropped first: bounds memory under a rule that matches everything. */
export const MAX_WOULD_DENY = 50_000;
/** Example ids per row. */
export const EXAMPLES_PER_ROW = 3;

/**
 * The would-be denials of shadow rules (issue #40 item 2), in memory, newest last: what
 * enforcing a rule would have refused, per rule × agent × tool. A restart starts it afresh; the
 * audit log keeps each one too (kind `policy`).
 */
export class PolicyImpact {
  #entries: WouldDeny[] = [];
  #dropped = 0;

  constructor(private readonly clock: Pick<Clock, 'now'>) {}

  record(entry: Omit<WouldDeny, 'at'>): void {
    this.#entries.push({ ...entry, at: this.clock.now() });
    if (this.#entries.length > MAX_WOULD_DENY) {
      // Halving at once keeps the cost of dropping amortised over many records.
      const drop = this.#entries.length - MAX_WOULD_DENY / 2;
      this.#entries = this.#entries.slice(drop);
      this.#dropped += drop;
    }
  }

  /** How many were dropped to stay under `MAX_WOULD_DENY` since start: a window reaching back past them is partial. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Sums since `since` (ms since the epoch), by rule × agent × tool, the largest count first. */
  summary(since: number): ImpactRow[] {
    const rows = new Map<string, ImpactRow>();
    for (let i = this.#entries.length - 1; i >= 0; i -= 1) {
      const entry = this.#entries[i]!;
      if (entry.at < since) break;
      const key = JSON.stringify([entry.rule, entry.agent, entry.server, entry.name]);
      const iso = new Date(entry.at).toISOString();
      const row = rows.get(key);
      if (!row) {
        rows.set(key, {
          rule: entry.rule,
          effect: entry.effect,
          agent: entry.agent,
          server: entry.server,
          name: entry.name,
          count: 1,
          first: iso,
          last: iso,
          examples: [entry.id],
        });
        continue;
      }
      row.count += 1;
      row.first = iso;
      if (row.examples.length < EXAMPLES_PER_ROW) row.examples.push(entry.id);
    }
    return [...rows.values()].sort((a, b) => b.count - a.count || a.rule.localeCompare(b.rule) || a.agent.localeCompare(b.agent) || a.name.localeCompare(b.name));
  }
}
