import { FIELDS, fieldTexts } from './search-fields.js';
import { documentTerms } from './search-text.js';
import type { BridgedTool } from './tool-bridge.js';
import { TopK } from './top-k.js';

const F = FIELDS.length;

/**
 * How the ranking weighs what it finds (BM25F, issue #37 item 2). Tuned by cross-validation across
 * the two query sets of bench/search (`bench/search/tune.ts`); see BENCHMARKS.md B10.
 */
export interface SearchWeights {
  /** How much a word counts in each field, in `FIELDS` order. */
  fields: readonly number[];
  /** BM25 term-frequency saturation. */
  k1: number;
  /** BM25 length normalisation, 0 (none) to 1 (full). */
  b: number;
  /** A longer word the query's word begins ("file" → "filesystem"), against the word itself. */
  prefix: number;
  /** BM25+'s floor: what any match of a word is worth beyond its frequency (× idf). */
  floor: number;
  /**
   * A tool's score is multiplied by (query words it matches)^coordination: a tool matching three
   * of the task's words beats one matching a single rare word three times over.
   */
  coordination: number;
}

/** A weighted query term: the query's own words at 1, synonyms below. */
export interface QueryTerm {
  term: string;
  weight: number;
}

/** A term searched for, and which of the query's words it stands for (bit `source`). */
interface Expanded extends QueryTerm {
  source: number;
}

export interface ScoredTool {
  tool: BridgedTool;
  score: number;
}

export interface ServerScore {
  server: string;
  score: number;
}

/**
 * One server's share of the index: its tools, each field's length per tool, and its postings
 * packed into one array — for a term at `offsets.get(term)`: the count of tools n, then n times
 * (tool, its count of the term in each field) — so a server costs a few objects, not one per word.
 */
interface Segment {
  tools: readonly BridgedTool[];
  /** tool × field → words. */
  lengths: Uint16Array;
  offsets: Map<string, number>;
  packed: Uint16Array;
  /** tool × field → field weight ÷ BM25 length normalisation, for the statistics of `epoch`. */
  scale: Float32Array;
  epoch: number;
}

/** A server's score: its best tool's, and its second and third best at this weight. */
const SERVER_TAIL_WEIGHT = 0.3;
/** Shortest query word matched as a prefix of longer ones. */
const MIN_PREFIX = 3;

/**
 * An inverted index in one segment per server (issue #37 item 6): indexing a server builds its
 * segment alone and adds its words to the shared statistics (document frequencies, field lengths);
 * removing it takes them away. A search scores only the postings of its words, into a per-segment
 * accumulator, keeps the best few in a bounded heap, and scores servers by their best tools —
 * nothing proportional to the catalogue is sorted.
 */
export class SearchIndex {
  private readonly segments = new Map<string, Segment>();
  private readonly documentFrequency = new Map<string, number>();
  /** First letters → the terms that begin with them, with how many segments hold each. */
  private readonly prefixes = new Map<string, Map<string, number>>();
  private readonly lengthSums = new Float64Array(F);
  private documents = 0;
  /** Moves whenever the shared statistics do (a segment's `scale` is worked out again). */
  private epoch = 0;
  /** Per-tool scores and matched query words of the segment being searched, reused from search to search. */
  private scratch = new Float64Array(64);
  private matchedWords = new Uint32Array(64);
  private touched = new Uint16Array(64);

  constructor(private readonly weights: SearchWeights) {}

  get size(): number {
    return this.documents;
  }

  hasServer(server: string): boolean {
    return this.segments.has(server);
  }

  /** Indexes `server`'s tools, replacing what was indexed of it. */
  setServer(server: string, tools: readonly BridgedTool[], about?: string): void {
    this.removeServer(server);
    if (tools.length === 0) return;
    const lengths = new Uint16Array(tools.length * F);
    const lists = new Map<string, number[]>();
    let size = 0;
    for (const [doc, tool] of tools.entries()) {
      const texts = fieldTexts(tool, about);
      for (let f = 0; f < F; f++) {
        const terms = documentTerms(texts[FIELDS[f] as keyof typeof texts]);
        lengths[doc * F + f] = Math.min(terms.length, 0xffff);
        this.lengthSums[f] = (this.lengthSums[f] as number) + (lengths[doc * F + f] as number);
        for (const term of terms) {
          let list = lists.get(term);
          if (!list) lists.set(term, (list = []));
          // A new record for this tool: its number, then a count per field.
          if (list[list.length - 1 - F] !== doc) {
            list.push(doc);
            for (let g = 0; g < F; g++) list.push(0);
            size += 1 + F;
          }
          const at = list.length - F + f;
          list[at] = Math.min((list[at] as number) + 1, 0xffff);
        }
      }
    }
    const packed = new Uint16Array(size + lists.size);
    const offsets = new Map<string, number>();
    let at = 0;
    for (const [term, list] of lists) {
      const count = list.length / (1 + F);
      offsets.set(term, at);
      packed[at++] = count;
      packed.set(list, at);
      at += list.length;
      this.documentFrequency.set(term, (this.documentFrequency.get(term) ?? 0) + count);
      this.countPrefix(term, 1);
    }
    this.documents += tools.length;
    this.epoch++;
    this.segments.set(server, { tools, lengths, offsets, packed, scale: new Float32Array(tools.length * F), epoch: -1 });
  }

  removeServer(server: string): void {
    const segment = this.segments.get(server);
    if (!segment) return;
    this.segments.delete(server);
    this.documents -= segment.tools.length;
    for (let doc = 0; doc < segment.tools.length; doc++) {
      for (let f = 0; f < F; f++) this.lengthSums[f] = (this.lengthSums[f] as number) - (segment.lengths[doc * F + f] as number);
    }
    this.epoch++;
    for (const [term, offset] of segment.offsets) {
      const left = (this.documentFrequency.get(term) ?? 0) - (segment.packed[offset] as number);
      if (left > 0) this.documentFrequency.set(term, left);
      else this.documentFrequency.delete(term);
      this.countPrefix(term, -1);
    }
  }

  /**
   * The `limit` best tools for `terms` and every matched server's score, best first. `only` keeps
   * one server's segment; `allows` is asked of each matched tool before it is counted.
   */
  search(terms: readonly QueryTerm[], limit: number, only?: string, allows?: (tool: BridgedTool) => boolean): { tools: ScoredTool[]; servers: ServerScore[] } {
    const expanded = this.expand(terms);
    if (expanded.length === 0 || this.documents === 0) return { tools: [], servers: [] };
    const { k1, floor, coordination } = this.weights;
    const best = new TopK<ScoredTool>(limit);
    const servers: ServerScore[] = [];
    for (const [server, segment] of this.segments) {
      if (only !== undefined && server !== only) continue;
      const count = segment.tools.length;
      if (this.scratch.length < count) {
        this.scratch = new Float64Array(count * 2);
        this.matchedWords = new Uint32Array(count * 2);
        this.touched = new Uint16Array(count * 2);
      }
      // The accumulators are all zero between searches: only the tools touched are reset below.
      const scores = this.scratch;
      const words = this.matchedWords;
      const touched = this.touched;
      let touchedCount = 0;
      for (const { term, weight, source } of expanded) {
        const offset = segment.offsets.get(term);
        if (offset === undefined) continue;
        if (segment.epoch !== this.epoch) this.rescale(segment);
        const { packed, scale } = segment;
        const end = offset + 1 + (packed[offset] as number) * (1 + F);
        for (let at = offset + 1; at < end; at += 1 + F) {
          const doc = packed[at] as number;
          let tf = 0;
          for (let f = 0; f < F; f++) tf += (packed[at + 1 + f] as number) * (scale[doc * F + f] as number);
          if ((scores[doc] as number) === 0) touched[touchedCount++] = doc;
          scores[doc] = (scores[doc] as number) + weight * (floor + tf / (k1 + tf)) + Number.MIN_VALUE;
          words[doc] = (words[doc] as number) | source;
        }
      }
      if (touchedCount === 0) continue;
      // The segment's three best scores, for its server's.
      let first = 0;
      let second = 0;
      let third = 0;
      for (let i = 0; i < touchedCount; i++) {
        const doc = touched[i] as number;
        const score = (scores[doc] as number) * bitCount(words[doc] as number) ** coordination;
        scores[doc] = 0;
        words[doc] = 0;
        const tool = segment.tools[doc] as BridgedTool;
        if (allows && !allows(tool)) continue;
        if (score > best.floor) best.offer(score, { tool, score });
        if (score > first) [first, second, third] = [score, first, second];
        else if (score > second) [second, third] = [score, second];
        else if (score > third) third = score;
      }
      if (first > 0) servers.push({ server, score: first + SERVER_TAIL_WEIGHT * (second + third) });
    }
    servers.sort((x, y) => y.score - x.score);
    return { tools: best.sorted(), servers };
  }

  /** Works out `segment.scale` for the shared statistics now (average field lengths). */
  private rescale(segment: Segment): void {
    const { b, fields } = this.weights;
    for (let f = 0; f < F; f++) {
      const average = (this.lengthSums[f] as number) / this.documents || 1;
      for (let doc = 0; doc < segment.tools.length; doc++) {
        segment.scale[doc * F + f] = (fields[f] as number) / (1 - b + (b * (segment.lengths[doc * F + f] as number)) / average);
      }
    }
    segment.epoch = this.epoch;
  }

  /** Each query term with its idf folded into its weight, and the longer words it begins. */
  private expand(terms: readonly QueryTerm[]): Expanded[] {
    const expanded = new Map<string, Expanded>();
    const add = (term: string, weight: number, source: number): void => {
      const df = this.documentFrequency.get(term);
      if (df === undefined) return;
      const idf = Math.log(1 + (this.documents - df + 0.5) / (df + 0.5));
      const known = expanded.get(term);
      if (known) {
        known.weight += weight * idf;
        known.source |= source;
      } else expanded.set(term, { term, weight: weight * idf, source });
    };
    // A synonym (weight below 1) counts as the word it widens only in the score, not as a word matched.
    for (const [i, { term, weight }] of terms.entries()) {
      const source = weight >= 1 ? 1 << Math.min(i, 30) : 0;
      add(term, weight, source);
      if (term.length < MIN_PREFIX) continue;
      for (const longer of this.prefixes.get(term.slice(0, MIN_PREFIX))?.keys() ?? []) {
        if (longer !== term && longer.startsWith(term)) add(longer, weight * this.weights.prefix, source);
      }
    }
    return [...expanded.values()];
  }

  private countPrefix(term: string, delta: number): void {
    if (term.length < MIN_PREFIX) return;
    const key = term.slice(0, MIN_PREFIX);
    let bucket = this.prefixes.get(key);
    if (!bucket) this.prefixes.set(key, (bucket = new Map()));
    const count = (bucket.get(term) ?? 0) + delta;
    if (count > 0) bucket.set(term, count);
    else bucket.delete(term);
    if (bucket.size === 0) this.prefixes.delete(key);
  }
}

/** How many bits of `x` are set. */
function bitCount(x: number): number {
  let n = x - ((x >>> 1) & 0x55555555);
  n = (n & 0x33333333) + ((n >>> 2) & 0x33333333);
  return (((n + (n >>> 4)) & 0xf0f0f0f) * 0x1010101) >>> 24 || 1;
}
