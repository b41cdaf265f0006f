import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createDatabase, startPostgres } from '../test/helpers/postgres-server.js';
import type { Benchmark, BenchContext, BenchResult } from './lib/bench.js';
import { ECHO_BODY, echoServers } from './lib/echo.js';
import { createHttpClient, expectStatus, type HttpClient } from './lib/http.js';
import { cpuTimeMs } from './lib/proc.js';
import { startServe } from './lib/serve.js';
import { summarize } from './lib/stats.js';
import { ms, type Row } from './lib/table.js';

/**
 * B16 — what one PostgreSQL statement on a call's path costs (issue #43 leftovers, b: should a
 * server's `maxConcurrentCalls` be counted for the cluster, which takes a statement per call to
 * acquire a slot and one to release it?). One `switchboard serve` on PostgreSQL, two agents:
 * `limited` has a `rateLimit` far above what the bench sends, so each of its calls takes a token
 * from the shared bucket (one upsert, issue #43 item 1) and is never refused; `free` has none.
 * Both call `echo` over REST, sequentially on one keep-alive socket, in alternating rounds. The
 * difference between them is one statement's round trip on the request path. Also measured from
 * the bench process: `SELECT 1` round trips to the same database.
 */
const ROUNDS = Number(process.env.BENCH_B16_ROUNDS ?? 7);
const CALLS = Number(process.env.BENCH_B16_CALLS ?? 400);
const KEYS = { limited: 'sbk_b16-limited-agent-key-0123456789', free: 'sbk_b16-free-agent-key-0123456789ab' } as const;

export const b16: Benchmark = {
  id: 'B16',
  title: 'one PostgreSQL statement per call: a rate-limited agent vs an unlimited one',
  async run(ctx: BenchContext): Promise<BenchResult> {
    const postgres = process.env.SWITCHBOARD_DATABASE_URL ? undefined : await startPostgres();
    const database = postgres ? await createDatabase(postgres.url) : undefined;
    const dbUrl = process.env.SWITCHBOARD_DATABASE_URL ?? database!.url;
    const serve = await startServe({
      servers: echoServers(),
      config: { store: dbUrl, token: 'b16-operator-token', agents: { limited: { key: KEYS.limited, rateLimit: { perMinute: 10_000_000 } }, free: { key: KEYS.free } } },
    });
    const probe = new pg.Pool({ connectionString: dbUrl, max: 1 });
    const samples = { limited: [] as number[], free: [] as number[], select1: [] as number[] };
    const cpu = { limited: 0, free: 0 };
    try {
      const base = await serve.listening;
      const clients = { limited: createHttpClient(base), free: createHttpClient(base) };
      const call = (client: HttpClient, key: string) =>
        client.request('POST', '/tools/mcp_echo_echo/call', { body: ECHO_BODY, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` } });
      for (const agent of ['limited', 'free'] as const) for (let i = 0; i < 300; i++) expectStatus(await call(clients[agent], KEYS[agent]), 200, `warm-up ${agent}`);
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? (['limited', 'free'] as const) : (['free', 'limited'] as const);
        for (const agent of order) {
          const cpu0 = cpuTimeMs(serve.pid);
          for (let i = 0; i < CALLS; i++) {
            const t0 = performance.now();
            expectStatus(await call(clients[agent], KEYS[agent]), 200, agent);
            samples[agent].push(performance.now() - t0);
          }
          cpu[agent] += cpuTimeMs(serve.pid) - cpu0;
        }
        for (let i = 0; i < CALLS; i++) {
          const t0 = performance.now();
          await probe.query('SELECT 1');
          samples.select1.push(performance.now() - t0);
        }
        ctx.log(`  round ${round + 1}/${ROUNDS}`);
      }
      clients.limited.close();
      clients.free.close();
    } finally {
      await probe.end();
      await serve.stop();
      await database?.drop();
      await postgres?.stop();
    }
    const [limited, free, select1] = [summarize(samples.limited), summarize(samples.free), summarize(samples.select1)];
    const n = ROUNDS * CALLS;
    const rows: Row[] = [
      {
        id: 'B16',
        metric: 'REST echo p50 / p99: rate-limited agent (one upsert per call) vs unlimited',
        value: `${ms(limited.p50)} / ${ms(limited.p99)}`,
        baseline: `${ms(free.p50)} / ${ms(free.p99)}`,
        ratio: `${(limited.p50 / free.p50).toFixed(2)}× (+${ms(limited.p50 - free.p50)})`,
        target: '—',
        verdict: 'report',
      },
      {
        id: 'B16',
        metric: 'daemon CPU per call: rate-limited vs unlimited',
        value: ms(cpu.limited / n),
        baseline: ms(cpu.free / n),
        ratio: `${(cpu.limited / cpu.free).toFixed(2)}×`,
        target: '—',
        verdict: 'report',
      },
      {
        id: 'B16',
        metric: 'SELECT 1 round trip from the bench process, p50 / p99',
        value: `${ms(select1.p50)} / ${ms(select1.p99)}`,
        baseline: '—',
        ratio: '—',
        target: '—',
        verdict: 'report',
      },
    ];
    return { rows, data: { rounds: ROUNDS, calls: CALLS, limited, free, select1, cpuMsPerCall: { limited: cpu.limited / n, free: cpu.free / n } } };
  },
};
