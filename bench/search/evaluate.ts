/**
 * Scores a tool-search function on the checked-in query set (bench/search/queries.json) over the
 * corpus (bench/search/corpus.json).
 *
 *   node --import tsx bench/search/evaluate.ts        # the naive word-overlap baseline
 *
 * `search(query)` returns tool names ranked best first, each as "<server>/<tool>" with the server
 * short names of corpus.json. A query counts as found at k when any of its expected tools (they are
 * alternatives, each an acceptable answer) is among the first k results; its reciprocal rank is
 * 1/rank of the best-placed expected tool, 0 when none is returned.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface CorpusTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: { properties?: Record<string, { description?: string } | undefined> };
  annotations?: Record<string, unknown>;
}

export interface CorpusServer {
  package: string;
  version: string;
  server: string;
  tools: CorpusTool[];
}

export interface Corpus {
  capturedAt: string;
  servers: CorpusServer[];
}

export interface Query {
  query: string;
  /** Acceptable answers, "<server>/<tool>". */
  expected: string[];
}

export interface Scores {
  recallAt1: number;
  recallAt5: number;
  recallAt10: number;
  mrr: number;
  n: number;
}

const here = dirname(fileURLToPath(import.meta.url));

export function loadCorpus(): Corpus {
  return JSON.parse(readFileSync(join(here, 'corpus.json'), 'utf8')) as Corpus;
}

/** The query set the index was tuned on (field weights, synonym table). */
export const QUERIES_FILE = join(here, 'queries.json');
/**
 * 80 queries written after the tuning, by someone who saw the corpus and not the index or its
 * synonym table: how the index does on requests it was not tuned for.
 */
export const HOLDOUT_FILE = join(here, 'queries-holdout.json');

export function loadQueries(file = QUERIES_FILE): Query[] {
  return JSON.parse(readFileSync(file, 'utf8')) as Query[];
}

/** Scores `search` over `queries` (the checked-in set by default). */
export async function evaluate(search: (query: string) => string[] | Promise<string[]>, queries: Query[] = loadQueries()): Promise<Scores> {
  let at1 = 0;
  let at5 = 0;
  let at10 = 0;
  let rr = 0;
  for (const q of queries) {
    const ranked = await search(q.query);
    const expected = new Set(q.expected);
    const rank = ranked.findIndex((name) => expected.has(name)) + 1; // 0: not found
    if (rank === 0) continue;
    if (rank <= 1) at1++;
    if (rank <= 5) at5++;
    if (rank <= 10) at10++;
    rr += 1 / rank;
  }
  const n = queries.length;
  return { recallAt1: at1 / n, recallAt5: at5 / n, recallAt10: at10 / n, mrr: rr / n, n };
}

/** Lower-case words of a text, names split on snake_case, kebab-case and camelCase. */
export function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 1);
}

const STOP = new Set([
  'the',
  'a',
  'an',
  'to',
  'of',
  'in',
  'on',
  'for',
  'and',
  'or',
  'is',
  'it',
  'me',
  'my',
  'this',
  'that',
  'with',
  'from',
  'by',
  'at',
  'as',
  'be',
  'are',
  'what',
  'which',
  'all',
  'our',
  'we',
  'do',
  'how',
  'show',
  'get',
  'use',
]);

/**
 * The naive baseline: counts the distinct query words found in a tool's server name, tool name and
 * description, ties broken by corpus order. No weighting, no stemming.
 */
export function naiveSearch(corpus: Corpus): (query: string) => string[] {
  const docs = corpus.servers.flatMap((s) =>
    s.tools.map((t) => ({
      id: `${s.server}/${t.name}`,
      words: new Set(words(`${s.server} ${t.name} ${t.title ?? ''} ${t.description ?? ''}`)),
    })),
  );
  return (query) => {
    const q = [...new Set(words(query))].filter((w) => !STOP.has(w));
    return docs
      .map((d, i) => ({ id: d.id, i, score: q.reduce((n, w) => n + (d.words.has(w) ? 1 : 0), 0) }))
      .filter((d) => d.score > 0)
      .sort((a, b) => b.score - a.score || a.i - b.i)
      .slice(0, 50)
      .map((d) => d.id);
  };
}

function format(s: Scores): string {
  const f = (x: number): string => x.toFixed(3);
  return `n=${s.n}  recall@1=${f(s.recallAt1)}  recall@5=${f(s.recallAt5)}  recall@10=${f(s.recallAt10)}  MRR=${f(s.mrr)}`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const corpus = loadCorpus();
  const tools = corpus.servers.reduce((n, s) => n + s.tools.length, 0);
  console.log(`corpus: ${corpus.servers.length} servers, ${tools} tools`);
  evaluate(naiveSearch(corpus)).then((s) => console.log(`naive word overlap: ${format(s)}`));
}
