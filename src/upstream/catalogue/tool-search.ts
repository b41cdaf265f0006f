import MiniSearch, { type SearchResult } from 'minisearch';
import { buildSynonyms, type SynonymTable } from './search-synonyms.js';
import type { BridgedTool } from './tool-bridge.js';
import type { ToolCatalogue } from './tool-catalogue.js';

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

/** One indexed tool; the fields are worked out from `tool` when indexed and again when removed. */
interface ToolDocument {
  id: number;
  tool: BridgedTool;
}

/** What the index holds of one server: the revision indexed and its documents. */
interface IndexedServer {
  revision: number;
  documents: ToolDocument[];
}

const FIELDS = ['name', 'title', 'description', 'params', 'server'] as const;
type Field = (typeof FIELDS)[number];

/**
 * Field weights (BM25F-like: MiniSearch scores each field with BM25 and sums them, boosted). A
 * tool's own name words say most about it; parameter text is long and loose, so it counts least.
 */
const BOOST: Record<Field, number> = { name: 3, title: 2, description: 1, params: 0.6, server: 1.5 };

/** Words that carry no meaning for finding a tool; dropped from documents and queries alike. */
const STOP_WORDS = new Set(
  'a an and are as at be by can do for from get i in into is it its me my of on or please some that the their this to use using want we with you your'.split(' '),
);

/** Caps what one tool contributes from its schema: a huge schema must not dominate the index. */
const MAX_PARAMS_TEXT = 4_000;

/**
 * Caps the description indexed. What a tool does is said first; some servers append a whole
 * manual (one in the corpus: 34 KB), which would otherwise match every query a little and, with
 * BM25's per-match floor, rank above the tool that fits (corpus: recall@1 0.53 → 0.54, MRR
 * 0.62 → 0.63 with the cap), and would grow the index for nothing.
 */
const MAX_DESCRIPTION_TEXT = 1_000;

/** How much a synonym counts against the query's own word (0.3 ranked best of 0.2–0.7). */
const SYNONYM_WEIGHT = 0.3;

/**
 * A ranked index over the aggregated tools (issue #23), built on MiniSearch (BM25 per field with
 * boosts, prefix and fuzzy matching; see BENCHMARKS.md for why this library). Nothing is built
 * until the first search; after that each search first brings the index up to date one server
 * at a time: a server whose `revisionOf` moved has its documents removed and its new ones added,
 * and no other server's documents are touched.
 */
export class ToolSearch {
  private index: MiniSearch<ToolDocument> | undefined;
  private readonly servers = new Map<string, IndexedServer>();
  /** Document id → its tool, for every indexed document. */
  private readonly tools = new Map<number, BridgedTool>();
  /** The catalogue version the index was last brought up to. */
  private syncedVersion = -1;
  private nextId = 0;
  private indexedCount = 0;

  constructor(private readonly catalogue: ToolCatalogue) {}

  /** Documents (re)indexed so far, for tests. */
  get indexed(): number {
    return this.indexedCount;
  }

  /**
   * The tools best matching `query`, best first. A query with no searchable word (only
   * punctuation, only stop words) matches nothing.
   */
  search(query: string, options: ToolSearchOptions): ToolSearchHit[] {
    const limit = Math.max(0, Math.floor(options.limit));
    if (limit === 0 || tokenize(query).every((token) => processTerm(token) === null)) return [];
    const index = this.sync();
    const { server, allows } = options;
    const { text, own } = widen(query);
    const filter = (result: SearchResult): boolean => {
      const tool = this.tools.get(result.id as number);
      return tool !== undefined && (server === undefined || tool.server === server) && (allows === undefined || allows(tool));
    };
    const hits: ToolSearchHit[] = [];
    for (const result of index.search(text, { filter, boostTerm: (term) => (own.has(term) ? 1 : SYNONYM_WEIGHT) })) {
      hits.push({ tool: this.tools.get(result.id as number) as BridgedTool, score: result.score });
      if (hits.length === limit) break;
    }
    return hits;
  }

  /** Brings the index up to the catalogue, one changed server at a time. */
  private sync(): MiniSearch<ToolDocument> {
    const index = (this.index ??= createIndex());
    if (this.syncedVersion === this.catalogue.version) return index;
    const present = new Set<string>();
    for (const run of this.catalogue.runs()) present.add(run.server);
    for (const [server, entry] of this.servers) {
      if (present.has(server)) continue;
      this.remove(index, entry.documents);
      this.servers.delete(server);
    }
    for (const server of present) {
      const revision = this.catalogue.revisionOf(server);
      const known = this.servers.get(server);
      if (known?.revision === revision) continue;
      if (known) this.remove(index, known.documents);
      const documents = this.catalogue.itemsOf(server).map((tool) => ({ id: this.nextId++, tool }));
      index.addAll(documents);
      for (const document of documents) this.tools.set(document.id, document.tool);
      this.indexedCount += documents.length;
      this.servers.set(server, { revision, documents });
    }
    this.syncedVersion = this.catalogue.version;
    return index;
  }

  /** Removes documents exactly (their fields are worked out again from the same tool objects). */
  private remove(index: MiniSearch<ToolDocument>, documents: readonly ToolDocument[]): void {
    index.removeAll(documents);
    for (const document of documents) this.tools.delete(document.id);
  }
}

function createIndex(): MiniSearch<ToolDocument> {
  return new MiniSearch<ToolDocument>({
    fields: [...FIELDS],
    idField: 'id',
    extractField: (document, field) => (field === 'id' ? document.id : fieldText(document.tool, field as Field)),
    tokenize,
    processTerm,
    searchOptions: {
      boost: BOOST,
      combineWith: 'OR',
      // A word still being typed, or a longer form of it ("file" → "files", "filesystem"). No
      // fuzzy matching: on the corpus it found nothing more and doubled the search time.
      prefix: (term) => term.length >= 3,
      // Prefix matches count, but less than the word itself.
      weights: { prefix: 0.3, fuzzy: 0 },
    },
  });
}

function fieldText(tool: BridgedTool, field: Field): string {
  switch (field) {
    case 'name':
      // The exposed name carries the server prefix; the original name is the server's own.
      return tool.name === tool.originalName ? tool.name : `${tool.name} ${tool.originalName}`;
    case 'title':
      return tool.title ?? '';
    case 'description':
      return tool.description.slice(0, MAX_DESCRIPTION_TEXT);
    case 'params':
      return paramsText(tool.inputSchema);
    case 'server':
      return tool.server;
  }
}

/** Parameter names and descriptions, nested object properties included, capped in length. */
function paramsText(schema: unknown): string {
  const parts: string[] = [];
  let length = 0;
  const visit = (node: unknown, depth: number): void => {
    if (depth > 3 || length > MAX_PARAMS_TEXT || node === null || typeof node !== 'object') return;
    const properties = (node as { properties?: unknown }).properties;
    if (properties === null || typeof properties !== 'object') return;
    for (const [name, property] of Object.entries(properties as Record<string, unknown>)) {
      parts.push(name);
      length += name.length;
      const description = (property as { description?: unknown } | null)?.description;
      if (typeof description === 'string') {
        parts.push(description);
        length += description.length;
      }
      visit(property, depth + 1);
      visit((property as { items?: unknown } | null)?.items, depth + 1);
    }
  };
  visit(schema, 0);
  return parts.join(' ').slice(0, MAX_PARAMS_TEXT);
}

let synonyms: SynonymTable | undefined;

/**
 * The query's own words and, after them, the other words of their synonym groups
 * (`search-synonyms.ts`); the search counts a synonym at `SYNONYM_WEIGHT`.
 */
function widen(query: string): { text: string; own: Set<string> } {
  synonyms ??= buildSynonyms(processTerm);
  const own = new Set(tokenize(query).map(processTerm).filter((term): term is string => term !== null));
  const words = new Set(own);
  for (const term of own) for (const synonym of synonyms.get(term) ?? []) words.add(synonym);
  return { text: [...words].join(' '), own };
}

/**
 * Words of a name or a sentence: split on anything not a letter or digit, and at camelCase and
 * letter/digit boundaries (`readFile` → `read File`, `HTTPServer` → `HTTP Server`).
 */
export function tokenize(text: string): string[] {
  return text
    .replace(/([\p{Ll}\d])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);
}

/** Lower case, stop words out, and plurals and common endings folded so "files" finds "file". */
export function processTerm(term: string): string | null {
  const word = term.toLowerCase();
  if (STOP_WORDS.has(word)) return null;
  return stem(word);
}

/** A light suffix folding (not a full stemmer): enough that a query's word form rarely matters. */
function stem(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (/(?:ss|us|is)$/.test(word)) return word;
  if (/(?:sses|xes|ches|shes|zes)$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s')) return word.slice(0, -1);
  return word;
}
