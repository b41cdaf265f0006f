import { performance } from 'node:perf_hooks';
import type { ServerConfig } from '../src/config/types.js';
import { fixtureServerConfig } from '../test/helpers/fixtures.js';
import type { Benchmark, BenchContext, BenchResult } from './lib/bench.js';
import { createHttpClient, expectStatus, type HttpClient } from './lib/http.js';
import { cpuTimeMs } from './lib/proc.js';
import { createRawHttpClient, type RawHttpClient, type RawResponse } from './lib/raw-http.js';
import { startServe } from './lib/serve.js';
import { median, medianOf, summarize } from './lib/stats.js';
import { kib, ms, ratio, verdict, type Row } from './lib/table.js';

/**
 * B4 — `GET /tools` with 10 000 tools (20 `paginated` servers × 5 pages × 100 tools) from a real
 * `switchboard serve`, over one keep-alive connection: the plain list, a revalidation with
 * `If-None-Match` (304), a filtered list (`?q=`, not cached) and the first GET after the catalogue
 * changed (the body is serialised again). `GET /health` in the same rounds is the baseline: the
 * cost of any request to the daemon. Timed requests go through a minimal raw HTTP/1.1 client
 * (lib/raw-http.ts) that counts body bytes into one reused buffer, so the bench's own parsing,
 * allocations and GC stay out of the figure; the first GET is made with node:http, parsed and
 * checked.
 */
const SERVERS = 20;
const PAGES = 5;
const PAGE_SIZE = 100;
const TOOLS = SERVERS * PAGES * PAGE_SIZE;
const ROUNDS = 7;
const PLAIN_PER_ROUND = 30;
const SMALL_PER_ROUND = 300;
const FILTERED_PER_ROUND = 10;
const CHANGES = 5;
/** Issue #6 targets. */
const TARGET_PLAIN_MS = 15;
const TARGET_304_MS = 1;

export const b4: Benchmark = {
  id: 'B4',
  title: `GET /tools with ${TOOLS.toLocaleString('en-US')} tools`,
  async run(ctx: BenchContext): Promise<BenchResult> {
    const servers: Record<string, ServerConfig> = {};
    for (let i = 1; i <= SERVERS; i++) {
      const name = `p${String(i).padStart(2, '0')}`;
      servers[name] = fixtureServerConfig('paginated', { env: { PAGES: String(PAGES), PAGE_SIZE: String(PAGE_SIZE), BENCH_INSTANCE: name } });
    }
    const serve = await startServe({ servers, ...(ctx.cpuProfileDir ? { cpuProfileDir: ctx.cpuProfileDir } : {}) });
    let http: HttpClient | undefined;
    let raw: RawHttpClient | undefined;
    try {
      const url = await serve.listening;
      const client = createHttpClient(url, { connections: 1 });
      http = client;
      const first = expectStatus(await client.get('/tools'), 200, 'GET /tools');
      const listedCount = (JSON.parse(first.body.toString('utf8')) as { tools: unknown[] }).tools.length;
      if (listedCount !== TOOLS) throw new Error(`GET /tools listed ${listedCount} tools, expected ${TOOLS}`);
      const etag = first.headers.etag;
      if (typeof etag !== 'string') throw new Error('GET /tools sent no ETag');
      const bodyBytes = first.body.length;

      const rawClient = await createRawHttpClient(url);
      raw = rawClient;
      const plain = async (): Promise<void> => {
        const res = expectRaw(await rawClient.get('/tools'), 200, 'GET /tools');
        if (res.bytes !== bodyBytes) throw new Error(`GET /tools: ${res.bytes} bytes, expected ${bodyBytes}`);
      };
      /** After a change the list is shorter; a body must still come. */
      const plainAfterChange = async (): Promise<void> => {
        const res = expectRaw(await rawClient.get('/tools'), 200, 'GET /tools');
        if (res.bytes === 0 || res.bytes >= bodyBytes) throw new Error(`GET /tools after a change: ${res.bytes} bytes`);
      };
      const revalidate = async (): Promise<void> => {
        expectRaw(await rawClient.get('/tools', { 'if-none-match': etag }), 304, 'GET /tools If-None-Match');
      };
      const health = async (): Promise<void> => {
        expectRaw(await rawClient.get('/health'), 200, 'GET /health');
      };
      const filtered = async (): Promise<void> => {
        expectRaw(await rawClient.get('/tools?q=tool_1_'), 200, 'GET /tools?q=');
      };

      for (const [call, n] of [
        [plain, 20],
        [revalidate, 500],
        [health, 500],
        [filtered, 5],
      ] as const)
        await timed(call, n);
      const rounds = { plain: [] as Stats[], revalidate: [] as Stats[], health: [] as Stats[], filtered: [] as Stats[] };
      let plainDaemonCpuMs = 0;
      let plainClientCpuMs = 0;
      for (let round = 0; round < ROUNDS; round++) {
        rounds.health.push(await timed(health, SMALL_PER_ROUND));
        const daemonCpu0 = cpuTimeMs(serve.pid);
        const clientCpu0 = process.cpuUsage();
        rounds.plain.push(await timed(plain, PLAIN_PER_ROUND));
        const clientCpu = process.cpuUsage(clientCpu0);
        plainDaemonCpuMs += cpuTimeMs(serve.pid) - daemonCpu0;
        plainClientCpuMs += (clientCpu.user + clientCpu.system) / 1000;
        rounds.revalidate.push(await timed(revalidate, SMALL_PER_ROUND));
        rounds.filtered.push(await timed(filtered, FILTERED_PER_ROUND));
        ctx.log(
          `  round ${round + 1}/${ROUNDS}: plain ${ms(rounds.plain.at(-1)!.p50)}, 304 ${ms(rounds.revalidate.at(-1)!.p50)}, /health ${ms(rounds.health.at(-1)!.p50)}, ?q= ${ms(rounds.filtered.at(-1)!.p50)}`,
        );
      }

      // The first GET after a change pays for serialising the new list; the next one is cached.
      const afterChange: number[] = [];
      const cachedAgain: number[] = [];
      for (let i = 1; i <= CHANGES; i++) {
        expectStatus(await client.postJson(`/servers/p${String(i).padStart(2, '0')}/disconnect`, '{}'), 200, 'POST disconnect');
        afterChange.push((await timed(plainAfterChange, 1)).p50);
        cachedAgain.push((await timed(plainAfterChange, 1)).p50);
      }

      const plainRequests = ROUNDS * PLAIN_PER_ROUND;
      const healthStats = medianOf(rounds.health);
      const plainStats = medianOf(rounds.plain);
      const revalidateStats = medianOf(rounds.revalidate);
      const filteredStats = medianOf(rounds.filtered);
      const baseline = `GET /health ${ms(healthStats.p50)}`;
      const rows: Row[] = [
        {
          id: 'B4',
          metric: `GET /tools p50, ${TOOLS.toLocaleString('en-US')} tools (${kib(bodyBytes)})`,
          value: ms(plainStats.p50),
          baseline,
          ratio: ratio(plainStats.p50, healthStats.p50),
          target: `≤ ${TARGET_PLAIN_MS} ms`,
          verdict: verdict(plainStats.p50 <= TARGET_PLAIN_MS),
        },
        {
          id: 'B4',
          metric: 'GET /tools, daemon process CPU per request (10,000 tools)',
          value: ms(plainDaemonCpuMs / plainRequests),
          baseline: `bench client ${ms(plainClientCpuMs / plainRequests)}`,
          ratio: ratio(plainDaemonCpuMs, plainClientCpuMs),
          target: '—',
          verdict: 'report',
        },
        {
          id: 'B4',
          metric: 'GET /tools p50, If-None-Match → 304',
          value: ms(revalidateStats.p50),
          baseline,
          ratio: ratio(revalidateStats.p50, healthStats.p50),
          target: `≤ ${TARGET_304_MS} ms`,
          verdict: verdict(revalidateStats.p50 <= TARGET_304_MS),
        },
        {
          id: 'B4',
          metric: 'GET /tools p50, first after a catalogue change',
          value: ms(median(afterChange)),
          baseline: `cached GET ${ms(median(cachedAgain))}`,
          ratio: ratio(median(afterChange), median(cachedAgain)),
          target: '—',
          verdict: 'report',
        },
        {
          id: 'B4',
          metric: 'GET /tools?q= p50 (filtered, not cached)',
          value: ms(filteredStats.p50),
          baseline,
          ratio: ratio(filteredStats.p50, healthStats.p50),
          target: '—',
          verdict: 'report',
        },
      ];
      return {
        rows,
        data: {
          tools: TOOLS,
          bodyBytes,
          rounds: ROUNDS,
          health: healthStats,
          plain: plainStats,
          revalidate: revalidateStats,
          filtered: filteredStats,
          cpuPerPlainRequestMs: { daemon: plainDaemonCpuMs / plainRequests, benchClient: plainClientCpuMs / plainRequests },
          afterChangeMs: afterChange,
          cachedAfterChangeMs: cachedAgain,
          perRound: rounds,
        },
      };
    } finally {
      raw?.close();
      http?.close();
      const stopped = await serve.stop();
      if (stopped.orphans > 0) ctx.log(`  warning: ${stopped.orphans} child process(es) outlived the daemon`);
    }
  },
};

function expectRaw(res: RawResponse, status: number, what: string): RawResponse {
  if (res.status !== status) throw new Error(`${what}: expected HTTP ${status}, got ${res.status}`);
  return res;
}

interface Stats extends Record<string, number> {
  p50: number;
  p99: number;
}

async function timed(call: () => Promise<void>, n: number): Promise<Stats> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call();
    samples.push(performance.now() - t0);
  }
  const { p50, p99 } = summarize(samples);
  return { p50, p99 };
}
