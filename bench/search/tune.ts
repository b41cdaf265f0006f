/**
 * Tunes tool search's weights (`SearchWeights`) by cross-validation across the two query sets
 * (issue #37 item 2): coordinate ascent on one set, scored on the other, both ways. A set's score
 * is only ever reported from weights tuned on the other set.
 *
 *   node --import tsx bench/search/tune.ts
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Tool } from '@modelcontextprotocol/client';
import { ToolCatalogue } from '../../src/upstream/catalogue/tool-catalogue.js';
import { DEFAULT_WEIGHTS, ToolSearch, type SearchWeights } from '../../src/upstream/catalogue/tool-search.js';
import { evaluate, HOLDOUT_FILE, loadCorpus, loadQueries, QUERIES_FILE, type Query, type Scores } from './evaluate.js';

/** The catalogue of the corpus, as the daemon holds it. */
export function corpusCatalogue(): ToolCatalogue {
  const catalogue = new ToolCatalogue();
  for (const server of loadCorpus().servers) catalogue.setServer(server.server, 'Bench', server.tools as Tool[], { deferred: false, stale: false });
  return catalogue;
}

/** The scores of `weights` on `queries` (ranked part, top 10). */
export async function score(catalogue: ToolCatalogue, weights: SearchWeights, queries: Query[]): Promise<Scores> {
  const index = new ToolSearch(catalogue, undefined, weights);
  return evaluate((query) => index.search(query, { limit: 10 }).map((hit) => `${hit.tool.server}/${hit.tool.originalName}`), queries);
}

/** What tuning maximises: recall@5 first, MRR to break near-ties. */
const objective = (s: Scores): number => s.recallAt5 + 0.5 * s.mrr;

const STEPS = [0.5, 0.7, 1.4, 2];

/** Coordinate ascent from `start`: each weight scaled by each step, kept when the objective rises. */
export async function tune(catalogue: ToolCatalogue, queries: Query[], start: SearchWeights = DEFAULT_WEIGHTS, rounds = 3): Promise<SearchWeights> {
  let best = start;
  let bestScore = objective(await score(catalogue, best, queries));
  const variants = (w: SearchWeights, step: number): SearchWeights[] => [
    ...w.fields.map((_, f) => ({ ...w, fields: w.fields.map((x, g) => (g === f ? round(x * step) : x)) })),
    { ...w, k1: round(w.k1 * step) },
    { ...w, b: Math.min(1, round(w.b * step)) },
    { ...w, prefix: Math.min(1, round(w.prefix * step)) },
    { ...w, floor: round(w.floor * step) },
    { ...w, coordination: round(w.coordination * step) },
  ];
  for (let round_ = 0; round_ < rounds; round_++) {
    let moved = false;
    for (const step of STEPS) {
      for (const candidate of variants(best, step)) {
        const value = objective(await score(catalogue, candidate, queries));
        if (value > bestScore + 1e-9) {
          best = candidate;
          bestScore = value;
          moved = true;
        }
      }
    }
    if (!moved) break;
  }
  return best;
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

const f = (x: number): string => x.toFixed(3);
const line = (s: Scores): string => `recall@1 ${f(s.recallAt1)}  recall@5 ${f(s.recallAt5)}  recall@10 ${f(s.recallAt10)}  MRR ${f(s.mrr)}`;

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const catalogue = corpusCatalogue();
  const sets: Array<[string, Query[]]> = [
    ['query set', loadQueries(QUERIES_FILE)],
    ['held-out set', loadQueries(HOLDOUT_FILE)],
  ];
  for (const [name, queries] of sets) console.log(`defaults on ${name}: ${line(await score(catalogue, DEFAULT_WEIGHTS, queries))}`);
  for (const [i, [name, queries]] of sets.entries()) {
    const [otherName, other] = sets[1 - i] as [string, Query[]];
    const weights = await tune(catalogue, queries);
    console.log(`tuned on ${name}: ${JSON.stringify(weights)}`);
    console.log(`  scored on ${otherName}: ${line(await score(catalogue, weights, other))}`);
  }
}
