import { cpus } from 'node:os';
import { startNginx, type Nginx } from '../test/helpers/nginx.js';
import { createDatabase, startPostgres } from '../test/helpers/postgres-server.js';
import type { Benchmark, BenchContext, BenchResult } from './lib/bench.js';
import { failingOnError, mcpClientPath, switchboardRestPath, type CallPath } from './lib/call-paths.js';
import { echoServers } from './lib/echo.js';
import { concurrentBlock, type BlockStats } from './lib/load.js';
import { childPids, cpuTimeMs } from './lib/proc.js';
import { startServe, type ServeProcess } from './lib/serve.js';
import { medianOf } from './lib/stats.js';
import { ms, perSecond, ratio, type Row } from './lib/table.js';

/**
 * B11 — replicas behind nginx (issue #28): the B2 load (the `echo` call, 8 in flight) over REST
 * and over 2026-07-28 `/mcp`, against 1, 2 and 3 `switchboard serve` replicas behind a real nginx
 * (test/helpers/nginx.ts, the settings of deploy/compose/nginx.conf), and against one replica
 * without nginx, which prices the balancer hop. Each replica has its own echo-stdio upstream.
 * Rounds rotate the order of the paths; figures are medians over rounds.
 *
 * Store: the replicas share one PostgreSQL database, as replicas do (issue #28): the one of
 * SWITCHBOARD_DATABASE_URL when set (the environment reaches the replicas unchanged), else one
 * the bench starts from Debian's package. The audit log of every call goes there.
 *
 * Everything — bench process, nginx, every replica and upstream — shares this machine's cores,
 * so the figures show what a balancer and more processes cost and whether they help on one
 * machine, not how the service scales across machines (BENCHMARKS.md, B11).
 */
const IN_FLIGHT = 8;
const WARMUP_CALLS = 1000;
const ROUNDS = 5;
const CALLS_PER_ROUND = 1600;
const REPLICAS = [1, 2, 3] as const;

interface Path {
  id: string;
  protocol: 'REST' | '/mcp 2026-07-28';
  /** 0: straight to replica 1, without nginx. */
  replicas: number;
  call: CallPath;
  /** nginx's master and workers; none without nginx. */
  nginxPids(): number[];
  /** The replicas the calls reach, with their echo-stdio children. */
  replicaPids(): number[];
}

/** CPU ms spent in the timed rounds, by who spent it. */
interface CpuMs {
  bench: number;
  nginx: number;
  replicas: number;
}

interface PathTotals {
  rounds: BlockStats[];
  cpu: CpuMs;
  busy: number[];
}

const cpuOf = (pids: readonly number[]): number => pids.reduce((sum, pid) => sum + cpuTimeMs(pid), 0);

/** Busy and total CPU time of the whole machine so far, in ms. */
function machineTimes(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const cpu of cpus()) {
    const { user, nice, sys, idle, irq } = cpu.times;
    busy += user + nice + sys + irq;
    total += user + nice + sys + idle + irq;
  }
  return { busy, total };
}

export const b11: Benchmark = {
  id: 'B11',
  title: `replicas behind nginx, echo calls, ${IN_FLIGHT} in flight`,
  async run(ctx: BenchContext): Promise<BenchResult> {
    // Replicas are what share one database: without SWITCHBOARD_DATABASE_URL the bench starts a
    // PostgreSQL of its own (as the tests do) and hands it to every replica through the environment.
    const given = process.env.SWITCHBOARD_DATABASE_URL;
    const postgres = given ? undefined : await startPostgres();
    const database = postgres ? await createDatabase(postgres.url) : undefined;
    if (database) process.env.SWITCHBOARD_DATABASE_URL = database.url;
    ctx.log(`  replicas share ${given ? 'the PostgreSQL database of SWITCHBOARD_DATABASE_URL' : 'a PostgreSQL database the bench started'}`);
    const serves: ServeProcess[] = [];
    const nginxes: Nginx[] = [];
    const paths: Path[] = [];
    try {
      for (let i = 0; i < Math.max(...REPLICAS); i++) serves.push(await startServe({ servers: echoServers() }));
      const urls = await Promise.all(serves.map((serve) => serve.listening));
      const replicaPids = (n: number): number[] => serves.slice(0, n).flatMap((serve) => [serve.pid, ...childPids(serve.pid)]);

      paths.push(
        {
          id: 'rest-direct',
          protocol: 'REST',
          replicas: 0,
          call: switchboardRestPath(urls[0] as string, serves[0]!.pid, IN_FLIGHT, 'rest-direct'),
          nginxPids: () => [],
          replicaPids: () => replicaPids(1),
        },
        {
          id: 'mcp-direct',
          protocol: '/mcp 2026-07-28',
          replicas: 0,
          call: failingOnError(await mcpClientPath({ id: 'mcp-direct', url: `${urls[0]}/mcp`, frontPid: serves[0]!.pid, tool: 'mcp_echo_echo', era: 'modern' })),
          nginxPids: () => [],
          replicaPids: () => replicaPids(1),
        },
      );
      for (const n of REPLICAS) {
        const nginx = await startNginx({ upstreams: urls.slice(0, n).map((url) => new URL(url).host), sticky: true });
        nginxes.push(nginx);
        const pids = { nginxPids: (): number[] => [nginx.pid, ...childPids(nginx.pid)], replicaPids: (): number[] => replicaPids(n) };
        paths.push(
          { id: `rest-${n}`, protocol: 'REST', replicas: n, call: switchboardRestPath(nginx.url, Number.NaN, IN_FLIGHT, `rest-${n}`), ...pids },
          {
            id: `mcp-${n}`,
            protocol: '/mcp 2026-07-28',
            replicas: n,
            call: failingOnError(await mcpClientPath({ id: `mcp-${n}`, url: `${nginx.url}/mcp`, frontPid: Number.NaN, tool: 'mcp_echo_echo', era: 'modern' })),
            ...pids,
          },
        );
      }
      for (const path of paths) await path.call.check();
      for (const path of paths) await concurrentBlock(path.call.call, WARMUP_CALLS, IN_FLIGHT);

      const totals = new Map<string, PathTotals>(paths.map((path) => [path.id, { rounds: [], cpu: { bench: 0, nginx: 0, replicas: 0 }, busy: [] }]));
      for (let round = 0; round < ROUNDS; round++) {
        for (let k = 0; k < paths.length; k++) {
          const path = paths[(round + k) % paths.length] as Path;
          const total = totals.get(path.id)!;
          const nginxPids = path.nginxPids();
          const replicaPids = path.replicaPids();
          const nginx0 = cpuOf(nginxPids);
          const replicas0 = cpuOf(replicaPids);
          const bench0 = process.cpuUsage();
          const machine0 = machineTimes();
          total.rounds.push(await concurrentBlock(path.call.call, CALLS_PER_ROUND, IN_FLIGHT));
          const machine1 = machineTimes();
          const bench = process.cpuUsage(bench0);
          total.cpu.bench += (bench.user + bench.system) / 1000;
          total.cpu.nginx += cpuOf(nginxPids) - nginx0;
          total.cpu.replicas += cpuOf(replicaPids) - replicas0;
          total.busy.push((machine1.busy - machine0.busy) / (machine1.total - machine0.total));
        }
        ctx.log(`  round ${round + 1}/${ROUNDS}: ${paths.map((path) => `${path.id} ${perSecond(totals.get(path.id)!.rounds.at(-1)!.callsPerSecond)}`).join(', ')}`);
      }

      const results = paths.map((path) => {
        const total = totals.get(path.id)!;
        const busy = [...total.busy].sort((a, b) => a - b)[Math.floor(total.busy.length / 2)] ?? Number.NaN;
        const perCall = (value: number): number => value / (ROUNDS * CALLS_PER_ROUND);
        const cpuPerCallMs = { bench: perCall(total.cpu.bench), nginx: perCall(total.cpu.nginx), replicas: perCall(total.cpu.replicas) };
        return { ...path, stats: medianOf(total.rounds), rounds: total.rounds, cpuPerCallMs, machineBusy: busy };
      });
      const rows: Row[] = [];
      for (const protocol of ['REST', '/mcp 2026-07-28'] as const) {
        const ofProtocol = results.filter((result) => result.protocol === protocol);
        const one = ofProtocol.find((result) => result.replicas === 1)!;
        for (const result of ofProtocol) {
          const where = result.replicas === 0 ? '1 replica, no nginx' : `${result.replicas} replica${result.replicas > 1 ? 's' : ''} via nginx`;
          const isBaseline = result === one;
          const cpu = result.cpuPerCallMs;
          rows.push(
            {
              id: 'B11',
              metric: `${protocol} echo calls/s, ${where}`,
              value: perSecond(result.stats.callsPerSecond),
              baseline: isBaseline ? '—' : `1 via nginx ${perSecond(one.stats.callsPerSecond)}`,
              ratio: isBaseline ? '—' : ratio(result.stats.callsPerSecond, one.stats.callsPerSecond),
              target: '—',
              verdict: 'report',
            },
            {
              id: 'B11',
              metric: `${protocol} p99 (p50), ${where}`,
              value: `${ms(result.stats.p99)} (${ms(result.stats.p50)})`,
              baseline: isBaseline ? '—' : `1 via nginx ${ms(one.stats.p99)}`,
              ratio: isBaseline ? '—' : ratio(result.stats.p99, one.stats.p99),
              target: '—',
              verdict: 'report',
            },
            {
              id: 'B11',
              metric: `${protocol} CPU per call: all (client, nginx, replicas with echo); machine busy, ${where}`,
              value: `${ms(cpu.bench + cpu.nginx + cpu.replicas)} (${ms(cpu.bench)}, ${ms(cpu.nginx)}, ${ms(cpu.replicas)}); ${(result.machineBusy * 100).toFixed(0)} %`,
              baseline: '—',
              ratio: '—',
              target: '—',
              verdict: 'report',
            },
          );
        }
      }
      return {
        rows,
        data: {
          inFlight: IN_FLIGHT,
          rounds: ROUNDS,
          callsPerRound: CALLS_PER_ROUND,
          store: given ? 'postgres (SWITCHBOARD_DATABASE_URL)' : 'postgres (started by the bench)',
          cores: cpus().length,
          paths: results.map(({ id, protocol, replicas, stats, rounds, cpuPerCallMs, machineBusy }) => ({ id, protocol, replicas, stats, rounds, cpuPerCallMs, machineBusy })),
        },
      };
    } finally {
      for (const path of paths) await path.call.close();
      for (const nginx of nginxes) await nginx.stop();
      for (const serve of serves) {
        const stopped = await serve.stop();
        if (stopped.orphans > 0) ctx.log(`  warning: ${stopped.orphans} child process(es) outlived a replica`);
      }
      if (database) {
        delete process.env.SWITCHBOARD_DATABASE_URL;
        await database.drop();
      }
      await postgres?.stop();
    }
  },
};
