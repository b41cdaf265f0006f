import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Tool } from '@modelcontextprotocol/client';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { ServerConfig } from '../src/config/types.js';
import { ToolCatalogue } from '../src/upstream/catalogue/tool-catalogue.js';
import { ToolSearch } from '../src/upstream/catalogue/tool-search.js';
import { fixtureServerConfig } from '../test/helpers/fixtures.js';
import type { Benchmark, BenchContext, BenchResult } from './lib/bench.js';
import { createHttpClient } from './lib/http.js';
import { measureSearchLatency, searchLatencyRows } from './lib/search-latency.js';
import { startServe } from './lib/serve.js';
import { verdict, type Row } from './lib/table.js';
import { evaluateAnswers, type AnswerScores } from './search/answer-eval.js';
import { evaluate, HOLDOUT_FILE, loadCorpus, loadQueries, type Scores } from './search/evaluate.js';

/**
 * B10 — tool search (issues #23, #37). Quality: the daemon's index (`ToolSearch`, in process) over
 * the checked-in corpus of 1 196 real tools, scored on the query set and on the held-out set written
 * without sight of the index or its synonym table; the weights are tuned on the query set only
 * (search/tune.ts), so held-out figures are out of sample. Whole answers: how often a right tool is
 * named anywhere in a `search_tools` answer (matches or map) and how big the answer is. Speed: `lib/search-latency.ts` at 1 000, 10 000
 * and 50 000 synthetic tools. Context cost: a real `switchboard serve` with the corpus's 46
 * servers (each a real stdio process listing its captured tools), `tools/list` over `/mcp` from an
 * SDK client, once with the defaults (`catalogue: auto` → search mode above 40 tools) and once
 * with `catalogue: full`; tokens counted with gpt-tokenizer's o200k_base encoding (GPT-4o's).
 */
const TARGET_RECALL_AT_5 = 0.85;
/** Issue #37: a right tool named anywhere in a `search_tools` answer (limit 5, 12 KB), median answer within the budget. */
const TARGET_NAMED = 0.92;
const ANSWER_BUDGET = 12_288;
const TARGET_SEARCH_SHARE = 0.02;
const READY_TIMEOUT_MS = 60_000;

export const b10: Benchmark = {
  id: 'B10',
  title: 'tool search: quality, latency, context tokens',
  async run(ctx: BenchContext): Promise<BenchResult> {
    const rows: Row[] = [];
    const corpus = loadCorpus();
    const catalogue = new ToolCatalogue();
    for (const server of corpus.servers) catalogue.setServer(server.server, 'Bench', server.tools as Tool[], { deferred: false, stale: false });
    const index = new ToolSearch(catalogue);
    const ranked = (query: string): string[] => index.search(query, { limit: 10 }).map((hit) => `${hit.tool.server}/${hit.tool.originalName}`);

    ctx.log('B10: scoring the query sets');
    const sets: [string, Scores][] = [['query set', await evaluate(ranked)]];
    const answers: [string, AnswerScores][] = [['query set', evaluateAnswers(catalogue, index, loadQueries(), 5, ANSWER_BUDGET)]];
    if (existsSync(HOLDOUT_FILE)) {
      sets.push(['held-out set', await evaluate(ranked, loadQueries(HOLDOUT_FILE))]);
      answers.push(['held-out set', evaluateAnswers(catalogue, index, loadQueries(HOLDOUT_FILE), 5, ANSWER_BUDGET)]);
    }
    for (const [name, scores] of answers) {
      const label = `${name}, search_tools answers (limit 5, ${ANSWER_BUDGET / 1024} KB)`;
      rows.push({
        id: 'B10',
        metric: `right tool named in the answer, ${label}`,
        value: scores.namedInAnswer.toFixed(3),
        baseline: '—',
        ratio: '—',
        target: `≥ ${TARGET_NAMED}`,
        verdict: verdict(scores.namedInAnswer >= TARGET_NAMED),
      });
      rows.push({
        id: 'B10',
        metric: `right tool among the matches with schemas, ${label}`,
        value: scores.inMatches.toFixed(3),
        baseline: '—',
        ratio: '—',
        target: '—',
        verdict: 'report',
      });
      rows.push({
        id: 'B10',
        metric: `answer bytes median / p90, ${label}`,
        value: `${scores.medianBytes} / ${scores.p90Bytes}`,
        baseline: '—',
        ratio: '—',
        target: `median ≤ ${ANSWER_BUDGET}`,
        verdict: verdict(scores.medianBytes <= ANSWER_BUDGET),
      });
    }
    for (const [name, scores] of sets) {
      const label = `${name} (${scores.n} queries, ${catalogue.list().length} tools)`;
      const report = { baseline: '—', ratio: '—', target: '—', verdict: 'report' as const };
      rows.push({ id: 'B10', metric: `recall@1, ${label}`, value: scores.recallAt1.toFixed(3), ...report });
      rows.push({
        id: 'B10',
        metric: `recall@5, ${label}`,
        value: scores.recallAt5.toFixed(3),
        baseline: '—',
        ratio: '—',
        target: `≥ ${TARGET_RECALL_AT_5}`,
        verdict: verdict(scores.recallAt5 >= TARGET_RECALL_AT_5),
      });
      rows.push({ id: 'B10', metric: `recall@10, ${label}`, value: scores.recallAt10.toFixed(3), ...report });
      rows.push({ id: 'B10', metric: `MRR, ${label}`, value: scores.mrr.toFixed(3), ...report });
    }

    ctx.log('B10: search latency at 1k/10k/50k tools');
    const latency = await measureSearchLatency();
    rows.push(...searchLatencyRows('B10', latency));

    ctx.log('B10: tools/list tokens, full and search mode');
    const servers: Record<string, ServerConfig> = {};
    for (const server of corpus.servers) servers[server.server] = fixtureServerConfig('corpus', { env: { CORPUS_SERVER: server.server } });
    const full = await listTokens(servers, { catalogue: 'full' });
    const search = await listTokens(servers, {});
    const share = search.tokens / full.tokens;
    rows.push({
      id: 'B10',
      metric: `tools/list tokens, full (${full.tools} tools)`,
      value: full.tokens.toLocaleString('en-US'),
      baseline: '—',
      ratio: '—',
      target: '—',
      verdict: 'report',
    });
    rows.push({
      id: 'B10',
      metric: `tools/list tokens, search mode (defaults; ${search.tools} tools)`,
      value: search.tokens.toLocaleString('en-US'),
      baseline: `full ${full.tokens.toLocaleString('en-US')}`,
      ratio: `${(share * 100).toFixed(2)} %`,
      target: `< ${TARGET_SEARCH_SHARE * 100} %`,
      verdict: verdict(share < TARGET_SEARCH_SHARE),
    });
    rows.push({
      id: 'B10',
      metric: 'search_tools result tokens (limit 5)',
      value: search.searchResultTokens.toLocaleString('en-US'),
      baseline: '—',
      ratio: '—',
      target: '—',
      verdict: 'report',
    });
    return { rows, data: { quality: Object.fromEntries(sets), answers: Object.fromEntries(answers), latency, tokens: { full, search } } };
  },
};

interface ListTokens {
  tools: number;
  tokens: number;
  /** One `search_tools` answer (search mode only; 0 in full mode). */
  searchResultTokens: number;
}

/** A real daemon with `servers`, one SDK agent on `/mcp`: the tokens of its `tools/list` result. */
async function listTokens(servers: Record<string, ServerConfig>, config: Record<string, unknown>): Promise<ListTokens> {
  const serve = await startServe({ servers, config });
  const client = new Client({ name: 'switchboard-bench', version: '0.0.0' });
  try {
    const url = await serve.listening;
    const http = createHttpClient(url, { connections: 1 });
    const deadline = performance.now() + READY_TIMEOUT_MS;
    while ((await http.get('/ready')).status !== 200) {
      if (performance.now() > deadline) throw new Error(`B10: /ready not 200 within ${READY_TIMEOUT_MS / 1000} s`);
      await sleep(100);
    }
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url)));
    const listed = await client.listTools();
    let searchResultTokens = 0;
    if (listed.tools.some((tool) => tool.name === 'search_tools')) {
      const result = await client.callTool({ name: 'search_tools', arguments: { query: 'take a screenshot of the pricing page', limit: 5 } });
      searchResultTokens = countTokens(JSON.stringify(result));
    }
    return { tools: listed.tools.length, tokens: countTokens(JSON.stringify(listed)), searchResultTokens };
  } finally {
    await client.close();
    await serve.stop();
  }
}
