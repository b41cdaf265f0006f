import type { Benchmark, BenchContext, BenchResult } from './lib/bench.js';
import { mcpClientPath, switchboardRestPath, type CallPath } from './lib/call-paths.js';
import { echoServers } from './lib/echo.js';
import { cpuTimeMs, statusBytes } from './lib/proc.js';
import { startServe, type ServeProcess } from './lib/serve.js';
import { soak, type PathOutcome, type SoakClient } from './lib/soak.js';
import { summarize } from './lib/stats.js';
import { describeTraffic, trafficOf } from './lib/traffic.js';
import { mib, ms, perSecond, type Row } from './lib/table.js';

/**
 * B9 — many agents at once (issue #17 item 4): 100 `/mcp` sessions (SDK v2 clients, half
 * 2025-era sessions, half pinned to 2026-07-28) and 100 REST clients (one keep-alive socket
 * each) call echo-stdio's `echo` through one real daemon, each waiting for its answer before
 * the next call, for BENCH_B9_SECONDS (30) after a BENCH_B9_WARMUP_S (5) warm-up. Every call's
 * answer is checked (the echo text), so a wrong answer counts as an error. The daemon's memory
 * is read after a full GC when warm, half-way and at the end, and again once every client has
 * gone: RSS, and the V8 heap in use, which is where anything kept per call would show. (RSS
 * alone also moves with how much heap V8 keeps committed after a busy spell.)
 */
const MCP_CLIENTS = 100;
const REST_CLIENTS = 100;
const SECONDS = Number(process.env.BENCH_B9_SECONDS ?? 30);
const WARMUP_SECONDS = Number(process.env.BENCH_B9_WARMUP_S ?? 5);
/** Growth between the warm and the final reading that counts as a leak worth chasing. */
const GROWTH_LIMIT_BYTES = 5 * 1024 * 1024;

interface MemoryReading {
  rss: number;
  /** V8 heap in use after the GC: what grows if something is kept per call. */
  heapUsed: number;
  heapTotal: number;
  external: number;
}

async function gcRead(serve: ServeProcess): Promise<MemoryReading> {
  const heap = await serve.gc();
  return { rss: statusBytes(serve.pid, 'VmRSS'), heapUsed: heap.heapUsed, heapTotal: heap.heapTotal, external: heap.external };
}

/** Connects `count` clients `batch` at a time, so 100 handshakes do not all land at once. */
async function connectAll(count: number, batch: number, make: (i: number) => Promise<CallPath>): Promise<CallPath[]> {
  const out: CallPath[] = [];
  while (out.length < count) {
    const size = Math.min(batch, count - out.length);
    out.push(...(await Promise.all(Array.from({ length: size }, (_, k) => make(out.length + k)))));
  }
  return out;
}

const signed = (bytes: number): string => `${bytes >= 0 ? '+' : '−'}${mib(Math.abs(bytes))}`;

function pathRows(label: string, outcome: PathOutcome, seconds: number): Row[] {
  const s = summarize(outcome.samples);
  return [
    {
      id: 'B9',
      metric: `${label}: p50 / p99 over ${seconds} s (${perSecond(outcome.samples.length / seconds)})`,
      value: `${ms(s.p50)} / ${ms(s.p99)}`,
      baseline: '—',
      ratio: '—',
      target: '—',
      verdict: 'report',
    },
    {
      id: 'B9',
      metric: `${label}: errors (of ${outcome.samples.length + outcome.errors} calls)`,
      value: String(outcome.errors),
      baseline: '—',
      ratio: '—',
      target: '0',
      verdict: outcome.errors === 0 ? 'met' : 'missed',
    },
  ];
}

export const b9: Benchmark = {
  id: 'B9',
  title: `${MCP_CLIENTS} /mcp sessions + ${REST_CLIENTS} REST clients for ${SECONDS} s`,
  async run(ctx: BenchContext): Promise<BenchResult> {
    const serve = await startServe({ servers: echoServers(), exposeGc: true, ...(ctx.cpuProfileDir ? { cpuProfileDir: ctx.cpuProfileDir } : {}) });
    const paths: CallPath[] = [];
    try {
      const url = await serve.listening;
      const rest = await connectAll(REST_CLIENTS, 50, async (i) => switchboardRestPath(url, serve.pid, 1, `rest-${i}`));
      paths.push(...rest);
      const mcp = await connectAll(MCP_CLIENTS, 10, (i) =>
        mcpClientPath({ id: `mcp-${i}`, url: `${url}/mcp`, frontPid: serve.pid, tool: 'mcp_echo_echo', era: i % 2 === 0 ? 'legacy' : 'modern' }),
      );
      paths.push(...mcp);
      // Each call checks the echo came back: a wrong answer is an error, not a fast call.
      const clients: SoakClient[] = paths.map((p, i) => ({ path: i < REST_CLIENTS ? 'rest' : (i - REST_CLIENTS) % 2 === 0 ? 'mcp-legacy' : 'mcp-modern', call: p.check }));

      ctx.log(`  warm-up ${WARMUP_SECONDS} s with ${clients.length} clients…`);
      const warmup = await soak(clients, WARMUP_SECONDS * 1000);
      const warmupErrors = [...warmup.values()].reduce((n, o) => n + o.errors, 0);
      const warm = await gcRead(serve);
      const cpu0 = cpuTimeMs(serve.pid);
      const half = (SECONDS * 1000) / 2;
      const first = await soak(clients, half);
      const mid = await gcRead(serve);
      const second = await soak(clients, half);
      const daemonCpuMs = cpuTimeMs(serve.pid) - cpu0;
      const traffic = await trafficOf(url);
      ctx.log(`  echo's ${describeTraffic(traffic)}`);
      const end = await gcRead(serve);
      for (const path of paths.splice(0)) await path.close();
      const gone = await gcRead(serve);

      const merged = new Map<string, PathOutcome>();
      for (const [path, a] of first) {
        const b = second.get(path) as PathOutcome;
        merged.set(path, { samples: [...a.samples, ...b.samples], errors: a.errors + b.errors, firstErrors: [...a.firstErrors, ...b.firstErrors].slice(0, 5) });
      }
      const totalCalls = [...merged.values()].reduce((n, o) => n + o.samples.length, 0);
      for (const [path, o] of merged) {
        const s = summarize(o.samples);
        ctx.log(`  ${path}: ${o.samples.length} calls, p50 ${ms(s.p50)}, p99 ${ms(s.p99)}, errors ${o.errors}${o.firstErrors.length ? ` (${o.firstErrors.join(' | ')})` : ''}`);
      }
      const show = (r: MemoryReading): string => `RSS ${mib(r.rss)} heap ${mib(r.heapUsed)} of ${mib(r.heapTotal)} external ${mib(r.external)}`;
      ctx.log(`  warm: ${show(warm)}; half-way: ${show(mid)}; end: ${show(end)}; clients gone: ${show(gone)}; warm-up errors ${warmupErrors}`);

      const growth = end.rss - warm.rss;
      const heapGrowth = end.heapUsed - warm.heapUsed;
      const rows: Row[] = [
        ...pathRows('REST POST /tools/mcp_echo_echo/call, 100 clients', merged.get('rest') as PathOutcome, SECONDS),
        ...pathRows('/mcp tools/call, 50 2025-era sessions', merged.get('mcp-legacy') as PathOutcome, SECONDS),
        ...pathRows('/mcp tools/call, 50 2026-07-28 clients', merged.get('mcp-modern') as PathOutcome, SECONDS),
        {
          id: 'B9',
          metric: 'daemon RSS after GC: warm → half-way → end',
          value: `${mib(warm.rss)} → ${mib(mid.rss)} → ${mib(end.rss)}`,
          baseline: `all clients gone ${mib(gone.rss)}`,
          ratio: `${signed(growth)} (half-way → end ${signed(end.rss - mid.rss)})`,
          target: 'report (a leak shows in the heap row)',
          verdict: 'report',
        },
        {
          id: 'B9',
          metric: 'daemon V8 heap used after GC: warm → half-way → end',
          value: `${mib(warm.heapUsed)} → ${mib(mid.heapUsed)} → ${mib(end.heapUsed)}`,
          baseline: `all clients gone ${mib(gone.heapUsed)}`,
          ratio: signed(heapGrowth),
          target: `growth ≤ ${mib(GROWTH_LIMIT_BYTES)}`,
          verdict: heapGrowth <= GROWTH_LIMIT_BYTES ? 'met' : 'missed',
        },
        {
          id: 'B9',
          metric: 'daemon CPU per call, all 200 clients',
          value: ms(daemonCpuMs / totalCalls),
          baseline: '—',
          ratio: '—',
          target: '—',
          verdict: 'report',
        },
      ];
      return {
        rows,
        data: {
          seconds: SECONDS,
          warmupSeconds: WARMUP_SECONDS,
          warmupErrors,
          memory: { warm, mid, end, clientsGone: gone },
          daemonCpuMs,
          traffic,
          paths: Object.fromEntries([...merged].map(([path, o]) => [path, { ...summarize(o.samples), errors: o.errors, firstErrors: o.firstErrors }])),
        },
      };
    } finally {
      for (const path of paths) await path.close().catch(() => undefined);
      const stopped = await serve.stop();
      if (stopped.orphans > 0) ctx.log(`  warning: ${stopped.orphans} child process(es) outlived the daemon`);
    }
  },
};
