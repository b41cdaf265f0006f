import type { ConversionCounts } from './usage-boost.js';

/** A search kept with its text (only with `search.recordQueries`). */
export interface RecordedQuery {
  time: string;
  query: string;
  agent?: string;
  /** Tools the answer named (matches and map). */
  returned: number;
}

/** `GET /search/stats` (issue #37 item 5). */
export interface SearchStatsSnapshot {
  /** Searches answered since start (`search_tools` and `GET /tools/search`). */
  searches: number;
  /** Of them, those that named no tool. */
  zeroResults: number;
  /** Agents' searches, and those followed within 10 minutes by a call of a tool they returned. */
  conversions: { searches: number; hits: number; misses: number };
  /** Tools of the catalogue no search has returned since start. */
  neverReturned: { count: number; names: string[] };
  /** Only with `search.recordQueries: true`: the latest searches and the latest that found nothing, newest first. */
  queries?: { recent: RecordedQuery[]; zeroResults: RecordedQuery[] };
}

/** Texts kept of each kind. */
const KEPT = 50;
/** Names listed of the tools never returned. */
const NEVER_LISTED = 100;

/**
 * What searches found (issue #37 item 5): counts always; query texts only when the operator
 * switches them on (`search.recordQueries`), in memory, never by default — a query can hold what
 * an agent was asked to do.
 */
export class SearchStats {
  private searches = 0;
  private zeroResults = 0;
  private readonly returned = new Set<string>();
  private readonly recent: RecordedQuery[] = [];
  private readonly zero: RecordedQuery[] = [];

  constructor(
    private readonly recordQueries: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  record(query: string, names: readonly string[], agent: string | undefined): void {
    this.searches++;
    if (names.length === 0) this.zeroResults++;
    for (const name of names) this.returned.add(name);
    if (!this.recordQueries) return;
    const entry: RecordedQuery = { time: new Date(this.now()).toISOString(), query, ...(agent !== undefined ? { agent } : {}), returned: names.length };
    keep(this.recent, entry);
    if (names.length === 0) keep(this.zero, entry);
  }

  snapshot(catalogue: readonly string[], conversions: ConversionCounts): SearchStatsSnapshot {
    const never = catalogue.filter((name) => !this.returned.has(name));
    return {
      searches: this.searches,
      zeroResults: this.zeroResults,
      conversions: { ...conversions, misses: conversions.searches - conversions.hits },
      neverReturned: { count: never.length, names: never.slice(0, NEVER_LISTED) },
      ...(this.recordQueries ? { queries: { recent: [...this.recent], zeroResults: [...this.zero] } } : {}),
    };
  }
}

function keep(list: RecordedQuery[], entry: RecordedQuery): void {
  list.unshift(entry);
  if (list.length > KEPT) list.pop();
}
