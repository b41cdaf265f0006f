import { startNginx, type Nginx } from '../test/helpers/nginx.js';
import type { Benchmark, BenchContext, BenchResult } from './lib/bench.js';
import { failingOnError, mcpClientPath, switchboardRestPath, type CallPath } from './lib/call-paths.js';
import { echoServers } from './lib/echo.js';
import { concurrentBlock, type BlockStats } from './lib/load.js';
import { childPids, cpuTimeMs } from './lib/proc.js';
import { startServe, type ServeProcess } from './lib/serve.js';
import { medianOf } from './lib/stats.js';
import { ms, perSecond, ratio, type Row } from './lib/table.js';

/**
 * B17 — what nginx's upstream keep-alive saves per call (issue #43 item 7, the 502s at a replica
 * kill): one `switchboard serve` replica with its echo-stdio upstream behind two nginx processes
 * of test/helpers/nginx.ts, one keeping idle connections to the replica (`keepalive 32`) and one
 * without (`keepalive` left out: a TCP connect per request); deploy/compose/nginx.conf keeps 32.
 * The echo call over REST and over 2026-07-28 `/mcp`, 8 in flight, BENCH_B17_ROUNDS (5) rounds of
 * 1600 calls per path in rotating order; medians over rounds, and nginx's CPU per call (master and
 * worker, /proc). The client keeps its own connections to nginx in both cases.
 */
const IN_FLIGHT = 8;
const WARMUP_CALLS = 500;
const ROUNDS = Number(process.env.BENCH_B17_ROUNDS ?? 5);
const CALLS_PER_ROUND = 1600;

interface Path {
  id: string;
  protocol: 'REST' | '/mcp 2026-07-28';
  keepalive: boolean;
  call: CallPath;
  nginx: Nginx;
}

export const b17: Benchmark = {
  id: 'B17',
  title: `nginx upstream keep-alive on and off, echo calls, ${IN_FLIGHT} in flight`,
  async run(ctx: BenchContext): Promise<BenchResult> {
    let serve: ServeProcess | undefined;
    const nginxes: Nginx[] = [];
    const paths: Path[] = [];
    try {
      serve = await startServe({ servers: echoServers() });
      const upstream = new URL(await serve.listening).host;
      for (const keepalive of [true, false]) {
        const nginx = await startNginx({ upstreams: [upstream], keepalive: keepalive ? 32 : 0 });
        nginxes.push(nginx);
        const tag = keepalive ? 'keepalive' : 'no-keepalive';
        paths.push(
          { id: `rest-${tag}`, protocol: 'REST', keepalive, nginx, call: switchboardRestPath(nginx.url, Number.NaN, IN_FLIGHT, `rest-${tag}`) },
          {
            id: `mcp-${tag}`,
            protocol: '/mcp 2026-07-28',
            keepalive,
            nginx,
            call: failingOnError(await mcpClientPath({ id: `mcp-${tag}`, url: `${nginx.url}/mcp`, frontPid: Number.NaN, tool: 'mcp_echo_echo', era: 'modern' })),
          },
        );
      }
      for (const path of paths) await path.call.check();
      for (const path of paths) await concurrentBlock(path.call.call, WARMUP_CALLS, IN_FLIGHT);
      const totals = new Map(paths.map((path) => [path.id, { rounds: [] as BlockStats[], nginxCpuMs: 0 }]));
      for (let round = 0; round < ROUNDS; round++) {
        for (let k = 0; k < paths.length; k++) {
          const path = paths[(round + k) % paths.length]!;
          const total = totals.get(path.id)!;
          const pids = [path.nginx.pid, ...childPids(path.nginx.pid)];
          const cpu0 = pids.reduce((sum, pid) => sum + cpuTimeMs(pid), 0);
          total.rounds.push(await concurrentBlock(path.call.call, CALLS_PER_ROUND, IN_FLIGHT));
          total.nginxCpuMs += pids.reduce((sum, pid) => sum + cpuTimeMs(pid), 0) - cpu0;
        }
        ctx.log(`  round ${round + 1}/${ROUNDS}: ${paths.map((path) => `${path.id} ${perSecond(totals.get(path.id)!.rounds.at(-1)!.callsPerSecond)}`).join(', ')}`);
      }
      const results = paths.map((path) => {
        const total = totals.get(path.id)!;
        return { ...path, stats: medianOf(total.rounds), nginxCpuPerCallMs: total.nginxCpuMs / (ROUNDS * CALLS_PER_ROUND) };
      });
      const rows: Row[] = [];
      for (const result of results) {
        const base = results.find((r) => r.protocol === result.protocol && r.keepalive)!;
        const isBase = result === base;
        const where = `${result.protocol}, ${result.keepalive ? 'keepalive 32' : 'no keepalive'}`;
        const vs = (value: string): Pick<Row, 'baseline' | 'ratio'> => ({ baseline: isBase ? '—' : value, ratio: '—' });
        rows.push(
          {
            id: 'B17',
            metric: `${where}: p50 (p99)`,
            value: `${ms(result.stats.p50)} (${ms(result.stats.p99)})`,
            ...vs(ms(base.stats.p50)),
            ...(isBase ? {} : { ratio: ratio(result.stats.p50, base.stats.p50) }),
            target: '—',
            verdict: 'report',
          },
          {
            id: 'B17',
            metric: `${where}: calls/s`,
            value: perSecond(result.stats.callsPerSecond),
            ...vs(perSecond(base.stats.callsPerSecond)),
            ...(isBase ? {} : { ratio: ratio(result.stats.callsPerSecond, base.stats.callsPerSecond) }),
            target: '—',
            verdict: 'report',
          },
          {
            id: 'B17',
            metric: `${where}: nginx CPU per call`,
            value: ms(result.nginxCpuPerCallMs),
            ...vs(ms(base.nginxCpuPerCallMs)),
            ...(isBase ? {} : { ratio: ratio(result.nginxCpuPerCallMs, base.nginxCpuPerCallMs) }),
            target: '—',
            verdict: 'report',
          },
        );
      }
      return {
        rows,
        data: {
          inFlight: IN_FLIGHT,
          rounds: ROUNDS,
          callsPerRound: CALLS_PER_ROUND,
          paths: results.map(({ id, protocol, keepalive, stats, nginxCpuPerCallMs }) => ({ id, protocol, keepalive, stats, nginxCpuPerCallMs })),
        },
      };
    } finally {
      for (const path of paths) await path.call.close();
      for (const nginx of nginxes) await nginx.stop();
      await serve?.stop();
    }
  },
};
