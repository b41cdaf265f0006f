import { performance } from 'node:perf_hooks';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { fixtureServerConfig } from '../test/helpers/fixtures.js';
import type { Benchmark, BenchContext, BenchResult } from './lib/bench.js';
import { startServe } from './lib/serve.js';
import { ms, ratio, type Row } from './lib/table.js';

/**
 * B14 — code mode (issue #39). One `switchboard serve` with `codeMode: true` and two echo-stdio
 * servers, `inv` (the records) and `price` (the lookups), and one 2026-07-28 SDK client on `/mcp`.
 * The task: read 20 records from `inv` (`echo` of a JSON record), look each up on `price` (`add`
 * of its quantity and a base), and sum the lookups. Done two ways, ROUNDS times each, alternating:
 *
 * - direct: 40 `tools/call`s, one after the other as an agent's turns would be, the sum done by
 *   the client;
 * - one `run_script` whose script makes the 40 calls (the lookups 8 at a time) and returns the sum.
 *
 * Reported: calls the agent makes, o200k tokens of what it receives (each result's `content` and
 * `structuredContent` as JSON, what a client puts in the model's context) and of what it sends
 * (the arguments), and the wall time of the calls (no model time: that is extra per direct call).
 */
const ROUNDS = 7;
const RECORDS = 20;

const record = (i: number) => ({ id: `item-${i}`, name: `Inventory item number ${i}`, quantity: i + 1, warehouse: 'north', tags: ['bench', 'code-mode'] });

const SCRIPT = `
const records = await Promise.all(Array.from({ length: ${RECORDS} }, (_, i) => tools.call('mcp_inv_echo', { text: JSON.stringify({ id: 'item-' + i, name: 'Inventory item number ' + i, quantity: i + 1, warehouse: 'north', tags: ['bench', 'code-mode'] }) })));
const prices = await Promise.all(records.map((r, i) => tools.call('mcp_price_add', { a: r.quantity, b: 1000 * i })));
return prices.reduce((total, p) => total + p.sum, 0);`;

const seen = (result: CallToolResult): string =>
  JSON.stringify({ content: result.content, ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}) });

interface Way {
  calls: number;
  receivedTokens: number;
  sentTokens: number;
  wallMs: number;
  total: number;
}

async function direct(client: Client): Promise<Way> {
  let receivedTokens = 0;
  let sentTokens = 0;
  let total = 0;
  const started = performance.now();
  for (let i = 0; i < RECORDS; i++) {
    const readArgs = { text: JSON.stringify(record(i)) };
    const read = (await client.callTool({ name: 'mcp_inv_echo', arguments: readArgs })) as CallToolResult;
    const { quantity } = JSON.parse((read.content[0] as { text: string }).text) as { quantity: number };
    const lookupArgs = { a: quantity, b: 1000 * i };
    const lookup = (await client.callTool({ name: 'mcp_price_add', arguments: lookupArgs })) as CallToolResult;
    total += (lookup.structuredContent as { sum: number }).sum;
    receivedTokens += countTokens(seen(read)) + countTokens(seen(lookup));
    sentTokens += countTokens(JSON.stringify(readArgs)) + countTokens(JSON.stringify(lookupArgs));
  }
  return { calls: RECORDS * 2, receivedTokens, sentTokens, wallMs: performance.now() - started, total };
}

async function script(client: Client): Promise<Way> {
  const started = performance.now();
  const result = (await client.callTool({ name: 'run_script', arguments: { code: SCRIPT } })) as CallToolResult;
  const wallMs = performance.now() - started;
  if (result.isError === true) throw new Error(`the script failed: ${JSON.stringify(result.content)}`);
  const total = Number((result.content[0] as { text: string }).text);
  return { calls: 1, receivedTokens: countTokens(seen(result)), sentTokens: countTokens(JSON.stringify({ code: SCRIPT })), wallMs, total };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export const b14: Benchmark = {
  id: 'B14',
  title: 'code mode: 20 reads, 20 lookups and a sum, direct calls against one script',
  async run(ctx: BenchContext): Promise<BenchResult> {
    const serve = await startServe({
      servers: { inv: fixtureServerConfig('echo-stdio'), price: fixtureServerConfig('echo-stdio', { env: { BENCH_ROLE: 'price' } }) },
      config: { codeMode: true },
    });
    const client = new Client({ name: 'b14', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    try {
      const url = await serve.listening;
      // Both servers listed before the first call (the startup gate).
      const listed = (await (await fetch(`${url}/tools?wait=true`)).json()) as { tools: Array<{ name: string }> };
      const names = listed.tools.map((tool) => tool.name);
      if (!names.includes('mcp_inv_echo') || !names.includes('mcp_price_add')) throw new Error(`tools missing: ${names.join(', ')}`);
      await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url)));
      const ways: Record<'direct' | 'script', Way[]> = { direct: [], script: [] };
      // One warm-up of each, not counted: the first script run loads the WebAssembly module.
      await direct(client);
      await script(client);
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? (['direct', 'script'] as const) : (['script', 'direct'] as const);
        for (const way of order) ways[way].push(way === 'direct' ? await direct(client) : await script(client));
        ctx.log(`  round ${round + 1}/${ROUNDS}: direct ${ms(ways.direct.at(-1)!.wallMs)}, script ${ms(ways.script.at(-1)!.wallMs)}`);
      }
      const [d, s] = [ways.direct[0]!, ways.script[0]!];
      if (d.total !== s.total) throw new Error(`the two ways disagree: ${d.total} against ${s.total}`);
      const [dWall, sWall] = [median(ways.direct.map((w) => w.wallMs)), median(ways.script.map((w) => w.wallMs))];
      const rows: Row[] = [
        { id: 'B14', metric: 'calls the agent makes', value: `${s.calls}`, baseline: `direct ${d.calls}`, ratio: ratio(s.calls, d.calls), target: '1', verdict: 'report' },
        {
          id: 'B14',
          metric: 'o200k tokens the agent receives',
          value: `${s.receivedTokens}`,
          baseline: `direct ${d.receivedTokens}`,
          ratio: ratio(s.receivedTokens, d.receivedTokens),
          target: '—',
          verdict: 'report',
        },
        {
          id: 'B14',
          metric: 'o200k tokens the agent sends (arguments)',
          value: `${s.sentTokens}`,
          baseline: `direct ${d.sentTokens}`,
          ratio: ratio(s.sentTokens, d.sentTokens),
          target: '—',
          verdict: 'report',
        },
        {
          id: 'B14',
          metric: `wall time of the calls, median of ${ROUNDS} (no model time)`,
          value: ms(sWall),
          baseline: `direct ${ms(dWall)}`,
          ratio: ratio(sWall, dWall),
          target: '—',
          verdict: 'report',
        },
      ];
      return { rows, data: { ways, total: d.total } };
    } finally {
      await client.close().catch(() => undefined);
      await serve.stop();
    }
  },
};
