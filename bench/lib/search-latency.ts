/**
 * Tool search at scale (issue #23, for B10): a synthetic catalogue of N tools in servers of 50,
 * then the index build time (the first search builds it), the heap it adds, search latency
 * p50/p99 over a fixed set of queries, and the cost of one server's change (re-indexes 50 tools).
 * Synthetic text: verbs and nouns of tool names, and Zipf-distributed domain words, drawn with a
 * seeded generator, so runs compare.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { performance } from 'node:perf_hooks';
import type { Tool } from '@modelcontextprotocol/client';
import { ToolCatalogue } from '../../src/upstream/catalogue/tool-catalogue.js';
import { ToolSearch } from '../../src/upstream/catalogue/tool-search.js';
import { percentile } from './stats.js';
import { ms, type Row } from './table.js';

export interface SearchLatencyPoint {
  tools: number;
  /** The first search: the whole index built, then the search. */
  buildMs: number;
  /** Heap and array buffers (the index's postings are typed arrays) after the build less before, both after a full GC. */
  heapMB: number;
  searches: number;
  p50Ms: number;
  p99Ms: number;
  /** One server's list changed (50 tools): the next search, re-index included. */
  oneServerChangeMs: number;
  /** The whole index built again as the daemon builds it, in the background: its longest step. */
  longestStepMs: number;
}

const TOOLS_PER_SERVER = 50;
const VERBS =
  'get list create update delete search find read write send fetch move copy rename archive export import sync start stop run query count upload download share close open merge tag'.split(
    ' ',
  );
const NOUNS =
  'file issue pull_request comment message channel user team project task ticket invoice payment customer order product event calendar meeting note document folder page database table row record branch commit release deployment container image secret token key bucket object log metric alert dashboard repository workflow job email contact lead report'.split(
    ' ',
  );
const FILLER =
  'the a of for in with by from to and or its this that all one each new given specified current existing optional required returns list details matching filter limit page cursor id name status time range owner account workspace'.split(
    ' ',
  );

/** A small seeded generator (mulberry32): the same catalogue and queries on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

/**
 * Domain words: real tool text has a wide vocabulary in which most words are rare (Zipf), so a
 * query word matches a few per cent of tools, not half. Pseudo-words from syllables, 6 000 of
 * them, drawn with probability ∝ 1/rank.
 */
const SYLLABLES = 'ba ce di fo gu ka le mi no pu ra se ti vo zu bra cle dri fro glu kra pla sta tre vor'.split(' ');
const LEXICON = Array.from({ length: 6_000 }, (_, i) => {
  let word = '';
  for (let n = i + 1, k = 0; k < 3 || n > 0; k++, n = Math.floor(n / SYLLABLES.length)) word += SYLLABLES[n % SYLLABLES.length];
  return word;
});
const ZIPF_CDF = (() => {
  const weights = LEXICON.map((_, rank) => 1 / (rank + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  let sum = 0;
  return weights.map((w) => (sum += w / total));
})();

function domainWord(random: () => number): string {
  const r = random();
  let lo = 0;
  let hi = ZIPF_CDF.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ZIPF_CDF[mid] as number) < r) lo = mid + 1;
    else hi = mid;
  }
  return LEXICON[lo] as string;
}

function sentence(random: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(i % 2 === 0 ? domainWord(random) : pick(random, i % 4 === 1 ? FILLER : NOUNS).replace('_', ' '));
  return out.join(' ');
}

function serverTools(random: () => number, server: number, version = 0): Tool[] {
  const tools: Tool[] = [];
  for (let i = 0; i < TOOLS_PER_SERVER; i++) {
    const verb = pick(random, VERBS);
    const noun = pick(random, NOUNS);
    const properties: Record<string, { type: string; description: string }> = {};
    for (let p = 0; p < 3; p++) properties[`${pick(random, NOUNS)}_${pick(random, ['id', 'name', 'filter', 'limit'])}`] = { type: 'string', description: sentence(random, 6) };
    tools.push({
      name: `${verb}_${noun}_${i}`,
      description: `${verb[0]?.toUpperCase()}${verb.slice(1)} ${noun.replace('_', ' ')} ${sentence(random, 14)} (server ${server}, v${version}).`,
      inputSchema: { type: 'object', properties },
    });
  }
  return tools;
}

/** A catalogue of `size` tools, `size / 50` servers. */
export function syntheticCatalogue(size: number, seed = 23): ToolCatalogue {
  const random = seeded(seed);
  const catalogue = new ToolCatalogue();
  for (let s = 0; s < Math.ceil(size / TOOLS_PER_SERVER); s++) {
    catalogue.setServer(`server${s}`, 'Bench', serverTools(random, s), { deferred: false, stale: false });
  }
  return catalogue;
}

/** A full GC when the runtime allows one (`--expose-gc` switched on here if it was not). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (() => void) | undefined;
  gc?.();
}

/** Queries about tools that exist: some of one tool's words, in other company. */
function queries(catalogue: ToolCatalogue, count: number): string[] {
  const random = seeded(1023);
  const tools = catalogue.list();
  return Array.from({ length: count }, (_, i) => {
    const words = (pick(random, tools).description.match(/[a-z]+/g) ?? []).filter((word) => word.length > 3);
    const some = [pick(random, words), pick(random, words), pick(random, words)].join(' ');
    // A mix of short keyword queries and longer sentences, as agents write them.
    return i % 2 === 0 ? some : `I want to ${pick(random, VERBS)} the ${some} for my ${pick(random, NOUNS).replace('_', ' ')}`;
  });
}

export async function measureSearchLatency(sizes: readonly number[] = [1_000, 10_000, 50_000], searches = 400): Promise<SearchLatencyPoint[]> {
  const points: SearchLatencyPoint[] = [];
  for (const size of sizes) {
    const catalogue = syntheticCatalogue(size);
    const texts = queries(catalogue, searches);
    collectGarbage();
    const used = (): number => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
    const heapBefore = used();
    const search = new ToolSearch(catalogue);
    let t0 = performance.now();
    search.search('create issue', { limit: 10 });
    const buildMs = performance.now() - t0;
    collectGarbage();
    const heapMB = (used() - heapBefore) / 1024 / 1024;
    // Warm up, then time each search alone.
    for (const text of texts.slice(0, 50)) search.search(text, { limit: 10 });
    const samples: number[] = [];
    for (const text of texts) {
      t0 = performance.now();
      search.search(text, { limit: 10 });
      samples.push(performance.now() - t0);
    }
    catalogue.setServer('server0', 'Bench', serverTools(seeded(99), 0, 1), { deferred: false, stale: false });
    t0 = performance.now();
    search.search('create issue', { limit: 10 });
    const oneServerChangeMs = performance.now() - t0;
    // As the daemon indexes a catalogue that changed: a few servers per step, yielding in between.
    const background = new ToolSearch(catalogue);
    let longestStepMs = 0;
    for (let more = true; more;) {
      t0 = performance.now();
      more = background.refresh(5);
      longestStepMs = Math.max(longestStepMs, performance.now() - t0);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    points.push({ tools: size, buildMs, heapMB, searches, p50Ms: percentile(samples, 50), p99Ms: percentile(samples, 99), oneServerChangeMs, longestStepMs });
    // Yield between sizes so a caller's progress output gets through.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return points;
}

/**
 * The figures as rows of the bench table; the targets at 10 000 tools (issues #23, #37): p50 ≤ 2 ms,
 * p99 ≤ 10 ms, the whole build ≤ 1 s, no background step over 20 ms.
 */
export function searchLatencyRows(id: string, points: readonly SearchLatencyPoint[]): Row[] {
  const rows: Row[] = [];
  const report = { baseline: '—', ratio: '—', target: '—', verdict: 'report' as const };
  for (const point of points) {
    const n = point.tools.toLocaleString('en-US');
    const at10k = point.tools === 10_000;
    const check = (value: number, limit: number, unit: string): Pick<Row, 'target' | 'verdict'> =>
      at10k ? { target: `≤ ${limit} ${unit}`, verdict: value <= limit ? 'met' : 'missed' } : { target: '—', verdict: 'report' };
    rows.push({ id, metric: `search p50, ${n} tools`, value: ms(point.p50Ms), baseline: '—', ratio: '—', ...check(point.p50Ms, 2, 'ms') });
    rows.push({ id, metric: `search p99, ${n} tools`, value: ms(point.p99Ms), baseline: '—', ratio: '—', ...check(point.p99Ms, 10, 'ms') });
    rows.push({ id, metric: `index build, ${n} tools`, value: ms(point.buildMs), baseline: '—', ratio: '—', ...check(point.buildMs, 1000, 'ms') });
    rows.push({ id, metric: `longest background index step, ${n} tools`, value: ms(point.longestStepMs), baseline: '—', ratio: '—', ...check(point.longestStepMs, 20, 'ms') });
    rows.push({ id, metric: `index heap, ${n} tools`, value: `${point.heapMB.toFixed(1)} MB`, ...report });
    rows.push({ id, metric: `one server changed (50 tools), ${n} tools`, value: ms(point.oneServerChangeMs), ...report });
  }
  return rows;
}
