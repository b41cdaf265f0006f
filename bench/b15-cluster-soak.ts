import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import pg from 'pg';
import { perRequestSignalFetch } from '../src/upstream/transport/transports.js';
import { freePort } from '../test/helpers/free-port.js';
import { startNginx } from '../test/helpers/nginx.js';
import { createDatabase, startPostgres } from '../test/helpers/postgres-server.js';
import type { Benchmark, BenchContext, BenchResult } from './lib/bench.js';
import { MODERN_REVISION } from './lib/call-paths.js';
import { ECHO_ARGS, ECHO_TEXT, echoServers } from './lib/echo.js';
import { childPids, statusBytes } from './lib/proc.js';
import { createWorkspace, startServe, type ServeProcess, type Workspace } from './lib/serve.js';
import { summarize } from './lib/stats.js';
import { mib, ms, perSecond, type Row } from './lib/table.js';

/**
 * B15 — the cluster soak (issue #43 item 7): three `switchboard serve` replicas on one PostgreSQL
 * database behind nginx (the settings of deploy/compose/nginx.conf: a consistent hash on
 * `Mcp-Session-Id`, round-robin without it), 20 agents — 10 SDK v2 clients pinned to 2026-07-28
 * and 10 2025-era sessions — each calling `echo` in a loop, for BENCH_B15_SECONDS (1800). Chaos:
 * every BENCH_B15_CHAOS_S (20) one echo-stdio child of a random replica is SIGKILLed (the replica
 * restarts it), and every BENCH_B15_KILL_S (300) the next replica in turn is SIGKILLed and started
 * again on its port. A 2025 session whose call fails starts a new session (`initialize`) and goes
 * on. Reported: calls, failures within 3 s of a kill (a replica's or an upstream's: the calls in
 * flight there) and outside, re-initialised sessions, RSS per replica (first and last reading of
 * each replica's life), and the database's connections (most seen).
 */
const SECONDS = Number(process.env.BENCH_B15_SECONDS ?? 1800);
const KILL_S = Number(process.env.BENCH_B15_KILL_S ?? 300);
const CHAOS_S = Number(process.env.BENCH_B15_CHAOS_S ?? 20);
const AGENTS = { modern: 10, legacy: 10 };
const REPLICAS = 3;
/** nginx's idle keep-alive connections to the replicas (32, as deploy/compose/nginx.conf); 0 for none. */
const KEEPALIVE = Number(process.env.BENCH_B15_NGINX_KEEPALIVE ?? 32);
/** A failure this soon after a kill is counted as the kill's (a call in flight where it happened). */
const KILL_WINDOW_MS = 3000;

interface Replica {
  port: number;
  workspace: Workspace;
  serve: ServeProcess;
  /** RSS readings of this life of the replica. */
  rss: number[];
}

interface Tally {
  calls: number;
  samples: number[];
  atKill: number;
  other: number;
  reinitialised: number;
  firstOther: string[];
  /** Every failure: seconds into the run, the kill it followed (if within the window), the message. */
  failures: Array<{ atS: number; kill?: string; message: string }>;
}

/** A kill: when, and what (`replica N` or `upstream of replica N`). */
interface Kill {
  at: number;
  what: string;
  /** A replica's kill: when (epoch ms, to compare with nginx's log) and its address. */
  wallMs?: number;
  address?: string;
}

export const b15: Benchmark = {
  id: 'B15',
  title: `cluster soak: ${REPLICAS} replicas behind nginx, ${AGENTS.modern + AGENTS.legacy} agents, chaos`,
  async run(ctx: BenchContext): Promise<BenchResult> {
    const postgres = process.env.SWITCHBOARD_DATABASE_URL ? undefined : await startPostgres();
    const database = postgres ? await createDatabase(postgres.url) : undefined;
    const dbUrl = process.env.SWITCHBOARD_DATABASE_URL ?? database!.url;
    process.env.SWITCHBOARD_DATABASE_URL = dbUrl;
    const probe = new pg.Pool({ connectionString: dbUrl, max: 1 });
    const kills: Kill[] = [];
    const t0run = performance.now();
    /** nginx's 502s at each replica kill: requests sent to the replica before it (in flight) and after. */
    const badGateways: Array<{ kill: string; atS: number; inFlight: number; sentAfter: number }> = [];
    /** When each killed replica was ready again (seconds into the run). */
    const restarts: Array<{ atS: number; replica: number }> = [];
    const timeline: Array<{ atS: number; rssMiB: number[]; load1: number; dbConnections: number }> = [];
    const replicas: Replica[] = [];
    let nginxErrors: Record<string, number> = {};
    const start = async (port: number, workspace: Workspace): Promise<ServeProcess> => {
      const serve = await startServe({ servers: echoServers(), workspace, port });
      await serve.waitForLog((entry) => entry.msg === 'ready');
      return serve;
    };
    for (let i = 0; i < REPLICAS; i++) {
      const [port, workspace] = [await freePort(), await createWorkspace()];
      replicas.push({ port, workspace, serve: await start(port, workspace), rss: [] });
    }
    const lives: Array<{ replica: number; rss: number[] }> = [];
    const nginx = await startNginx({ upstreams: replicas.map((r) => `127.0.0.1:${r.port}`), sticky: true, failTimeoutS: 2, keepalive: KEEPALIVE });
    const tallies = { modern: tally(), legacy: tally() };
    let dbConnections = 0;
    const deadline = performance.now() + SECONDS * 1000;
    const failed = (t: Tally, err: unknown): void => {
      const now = performance.now();
      const kill = kills.findLast((k) => now >= k.at && now - k.at < KILL_WINDOW_MS);
      const message = err instanceof Error ? err.message : String(err);
      t.failures.push({ atS: Math.round((now - t0run) / 100) / 10, ...(kill ? { kill: kill.what } : {}), message: message.slice(0, 200) });
      if (kill) t.atKill += 1;
      else {
        t.other += 1;
        if (t.firstOther.length < 5) t.firstOther.push(err instanceof Error ? err.message : String(err));
      }
    };
    const agent = async (era: 'modern' | 'legacy'): Promise<void> => {
      const t = tallies[era];
      let client: Client | undefined;
      while (performance.now() < deadline) {
        try {
          if (!client) {
            client = new Client({ name: 'b15', version: '0.0.0' }, { versionNegotiation: { mode: era === 'legacy' ? 'legacy' : { pin: MODERN_REVISION } } });
            await client.connect(new StreamableHTTPClientTransport(new URL(`${nginx.url}/mcp`), { fetch: perRequestSignalFetch() }));
          }
          const t0 = performance.now();
          const result = (await client.callTool({ name: 'mcp_echo_echo', arguments: ECHO_ARGS })) as { isError?: boolean; content?: Array<{ text?: string }> };
          if (result.isError || result.content?.[0]?.text !== ECHO_TEXT) throw new Error(`wrong answer: ${JSON.stringify(result).slice(0, 200)}`);
          t.samples.push(performance.now() - t0);
          t.calls += 1;
        } catch (err) {
          failed(t, err);
          // A 2025 session whose replica went away answers 404: the agent starts a new one.
          if (era === 'legacy' && client) {
            await client.close().catch(() => undefined);
            client = undefined;
            t.reinitialised += 1;
          }
        }
      }
      await client?.close().catch(() => undefined);
    };
    const sample = async (): Promise<void> => {
      for (const replica of replicas) replica.rss.push(statusBytes(replica.serve.pid, 'VmRSS'));
      const { rows } = await probe.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database()');
      const n = Number(rows[0]?.n ?? 0);
      dbConnections = Math.max(dbConnections, n);
      timeline.push({
        atS: Math.round((performance.now() - t0run) / 1000),
        rssMiB: replicas.map((r) => Math.round((r.rss.at(-1) ?? Number.NaN) / 1048576)),
        load1: loadavg()[0]!,
        dbConnections: n,
      });
    };
    const chaos = async (): Promise<void> => {
      let next = 0;
      let lastKill = performance.now();
      while (performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, CHAOS_S * 1000));
        if (performance.now() >= deadline) break;
        await sample();
        if (performance.now() - lastKill >= KILL_S * 1000) {
          const replica = replicas[next % REPLICAS]!;
          next += 1;
          lastKill = performance.now();
          kills.push({ at: performance.now(), what: `replica ${replicas.indexOf(replica) + 1}`, wallMs: Date.now(), address: `127.0.0.1:${replica.port}` });
          ctx.log(`  SIGKILL replica ${replicas.indexOf(replica) + 1} (pid ${replica.serve.pid}); calls so far ${tallies.modern.calls + tallies.legacy.calls}`);
          process.kill(replica.serve.pid, 'SIGKILL');
          await replica.serve.stop();
          lives.push({ replica: replicas.indexOf(replica) + 1, rss: replica.rss });
          replica.serve = await start(replica.port, replica.workspace);
          replica.rss = [];
          restarts.push({ atS: Math.round((performance.now() - t0run) / 100) / 10, replica: replicas.indexOf(replica) + 1 });
        } else {
          const replica = replicas[Math.floor(Math.random() * REPLICAS)]!;
          const echo = childPids(replica.serve.pid).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('echo-stdio'));
          if (echo !== undefined) {
            kills.push({ at: performance.now(), what: `upstream of replica ${replicas.indexOf(replica) + 1}` });
            process.kill(echo, 'SIGKILL');
          }
        }
      }
    };
    try {
      await sample();
      await Promise.all([...Array.from({ length: AGENTS.modern }, () => agent('modern')), ...Array.from({ length: AGENTS.legacy }, () => agent('legacy')), chaos()]);
      await sample();
      for (const [i, replica] of replicas.entries()) lives.push({ replica: i + 1, rss: replica.rss });
    } finally {
      // Each 502 nginx answered for a killed replica: was it sent to it before the kill (in flight there) or after?
      const log = await nginx.accessLog();
      for (const kill of kills.filter((k) => k.address !== undefined)) {
        const failed = log.filter((e) => e.status === 502 && e.upstream.includes(kill.address!) && e.endedAtMs >= kill.wallMs! && e.endedAtMs - kill.wallMs! < 10_000);
        const before = failed.filter((e) => e.endedAtMs - e.durationMs <= kill.wallMs!).length;
        badGateways.push({ kill: kill.what, atS: Math.round((kill.at - t0run) / 100) / 10, inFlight: before, sentAfter: failed.length - before });
        ctx.log(`  ${kill.what} killed: ${failed.length} × 502 from nginx, ${before} sent to it before the kill, ${failed.length - before} after`);
      }
      // Why nginx answered them: its error log's reason per line (refused connects are retried, not 502s).
      const reasons = new Map<string, number>();
      for (const line of (await nginx.errorLog()).split('\n')) {
        const reason = /\[error\] \d+#\d+: \*\d+ ([^,]+)/.exec(line)?.[1];
        if (reason) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      }
      for (const [reason, n] of reasons) ctx.log(`  nginx error log: ${n} × ${reason}`);
      nginxErrors = Object.fromEntries(reasons);
      await nginx.stop();
      for (const replica of replicas) {
        await replica.serve.stop();
        await replica.workspace.remove();
      }
      await probe.end();
      await database?.drop();
      await postgres?.stop();
    }
    const rows: Row[] = [];
    for (const [era, t] of Object.entries(tallies)) {
      const s = summarize(t.samples);
      rows.push({
        id: 'B15',
        metric: `${era === 'modern' ? '2026-07-28' : '2025 sessions'}: calls (${perSecond(t.calls / SECONDS)}), p50 / p99, failed at a kill / elsewhere${era === 'legacy' ? ', re-initialised' : ''}`,
        value: `${t.calls}, ${ms(s.p50)} / ${ms(s.p99)}, ${t.atKill} / ${t.other}${era === 'legacy' ? `, ${t.reinitialised}` : ''}`,
        ...REPORT,
      });
      if (t.firstOther.length > 0) ctx.log(`  ${era}: first failures away from a kill: ${t.firstOther.join(' | ')}`);
    }
    for (const life of lives.filter((l) => l.rss.length >= 2)) {
      rows.push({
        id: 'B15',
        metric: `replica ${life.replica}: RSS first → last reading of one life (${life.rss.length} readings)`,
        value: `${mib(life.rss[0]!)} → ${mib(life.rss.at(-1)!)}`,
        ...REPORT,
      });
    }
    rows.push({
      id: 'B15',
      metric: `PostgreSQL connections to the database, most seen (${kills.length} kills of replicas and upstreams in ${SECONDS} s)`,
      value: String(dbConnections),
      ...REPORT,
    });
    const data = {
      seconds: SECONDS,
      killS: KILL_S,
      chaosS: CHAOS_S,
      kills: kills.map((k) => ({ atS: Math.round((k.at - t0run) / 100) / 10, what: k.what })),
      dbConnections,
      lives,
      timeline,
      restarts,
      badGateways,
      keepalive: KEEPALIVE,
      nginxErrors,
      tallies: Object.fromEntries(Object.entries(tallies).map(([era, t]) => [era, { ...t, samples: t.samples.length }])),
    };
    return { rows, data };
  },
};

const REPORT = { baseline: '—', ratio: '—', target: '—', verdict: 'report' } as const;

function tally(): Tally {
  return { calls: 0, samples: [], atKill: 0, other: 0, reinitialised: 0, firstOther: [], failures: [] };
}
