import { SearchIndex, type QueryTerm, type SearchWeights, type ServerScore } from './search-index.js';
import { buildSynonyms, type SynonymTable } from './search-synonyms.js';
import { processTerm, queryTerms } from './search-text.js';
import type { BridgedTool } from './tool-bridge.js';
import type { ToolCatalogue } from './tool-catalogue.js';

export { tokenize, processTerm } from './search-text.js';
export type { SearchWeights } from './search-index.js';

export interface ToolSearchHit {
  tool: BridgedTool;
  score: number;
}

export interface ToolSearchOptions {
  /** The most hits returned. */
  limit: number;
  /** Only this server's tools. */
  server?: string;
  /** Only the tools this accepts (an agent's view). */
  allows?: (tool: BridgedTool) => boolean;
}

/** A search's whole ranking: the best `limit` tools, and every server with a match, best first. */
export interface ToolRanking {
  tools: ToolSearchHit[];
  servers: ServerScore[];
}

/**
 * The weights in force, from `bench/search/tune.ts` (cross-validated across the two query sets;
 * BENCHMARKS.md B10 has the folds). Fields in `FIELDS` order: name, title, description, params,
 * annotations, server.
 */
export const DEFAULT_WEIGHTS: SearchWeights = { fields: [4.2, 4, 1, 0.42, 0.3, 3], k1: 4.7, b: 0.75, prefix: 0.3, floor: 0.13, coordination: 0.24 };

/** How long one background refresh step may run before it yields to the event loop, in ms. */
const BACKGROUND_SLICE_MS = 5;

/** How much a synonym counts against the query's own word. */
const SYNONYM_WEIGHT = 0.3;

/**
 * A ranked index over the aggregated tools (issues #23, #37): BM25F over everything a server says
 * of a tool (`search-fields.ts`), in one segment per server (`search-index.ts`). Nothing is built
 * until the first search or `refresh()`; after that each brings the index up to date one server at
 * a time: a server whose `revisionOf` moved has its segment rebuilt, and no other is touched.
 */
export class ToolSearch {
  private readonly index: SearchIndex;
  /** server → the catalogue revision and the server's own words its segment was built from. */
  private readonly revisions = new Map<string, { revision: number; about: string | undefined }>();
  private syncedVersion = -1;
  private indexedCount = 0;
  private scheduled = false;

  constructor(
    private readonly catalogue: ToolCatalogue,
    /** What a server says of itself (its `instructions`), indexed with its tools. */
    private readonly aboutOf: (server: string) => string | undefined = () => undefined,
    weights: SearchWeights = DEFAULT_WEIGHTS,
  ) {
    this.index = new SearchIndex(weights);
  }

  /** Documents (re)indexed so far, for tests. */
  get indexed(): number {
    return this.indexedCount;
  }

  /**
   * The tools best matching `query`, best first. A query with no searchable word (only
   * punctuation, only stop words) matches nothing.
   */
  search(query: string, options: ToolSearchOptions): ToolSearchHit[] {
    return this.rank(query, options).tools;
  }

  /** The best `limit` tools and the matched servers' scores (the neighbourhood map's order). */
  rank(query: string, options: ToolSearchOptions): ToolRanking {
    const limit = Math.max(0, Math.floor(options.limit));
    const terms = widen(query);
    if (limit === 0 || terms.length === 0) return { tools: [], servers: [] };
    this.refresh();
    return this.index.search(terms, limit, options.server, options.allows);
  }

  /**
   * Brings the index up to the catalogue in the background, a server or a few per turn of the
   * event loop (a search in between indexes what is left itself). Called when the tool list
   * changes, so a server's tools are indexed as it lists them, never all at once on a search.
   */
  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const step = (): void => {
      if (this.refresh(BACKGROUND_SLICE_MS)) setImmediate(step).unref();
      else this.scheduled = false;
    };
    setImmediate(step).unref();
  }

  /**
   * Brings the index up to the catalogue, one changed server at a time; with `budgetMs`, stops
   * after the server that spent it and says whether any is left (the rest on a later call), so a
   * background refresh never holds the event loop for more than about one server's indexing.
   */
  refresh(budgetMs = Infinity): boolean {
    if (this.syncedVersion === this.catalogue.version) return false;
    const started = performance.now();
    let indexedOne = false;
    const present = new Set<string>();
    for (const run of this.catalogue.runs()) present.add(run.server);
    for (const server of this.revisions.keys()) {
      if (present.has(server)) continue;
      this.index.removeServer(server);
      this.revisions.delete(server);
    }
    for (const server of present) {
      const revision = this.catalogue.revisionOf(server);
      const about = this.aboutOf(server);
      const known = this.revisions.get(server);
      if (known?.revision === revision && known.about === about) continue;
      if (indexedOne && performance.now() - started >= budgetMs) return true;
      indexedOne = true;
      const tools = this.catalogue.itemsOf(server);
      this.index.setServer(server, tools, about);
      this.indexedCount += tools.length;
      this.revisions.set(server, { revision, about });
    }
    this.syncedVersion = this.catalogue.version;
    return false;
  }
}

let synonyms: SynonymTable | undefined;

/**
 * The query's own words and, after them, the other words of their synonym groups
 * (`search-synonyms.ts`), which count at `SYNONYM_WEIGHT`.
 */
function widen(query: string): QueryTerm[] {
  synonyms ??= buildSynonyms(processTerm);
  const own = new Set(queryTerms(query));
  const terms: QueryTerm[] = [...own].map((term) => ({ term, weight: 1 }));
  const seen = new Set(own);
  for (const term of own) {
    for (const synonym of synonyms.get(term) ?? []) {
      if (seen.has(synonym)) continue;
      seen.add(synonym);
      terms.push({ term: synonym, weight: SYNONYM_WEIGHT });
    }
  }
  return terms;
}
