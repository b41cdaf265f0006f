import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerConfig } from '../../src/config/types.js';
import { fixtureServerConfig } from '../../test/helpers/fixtures.js';
import type { BenchContext } from './bench.js';
import { createHttpClient, expectStatus, type HttpClient } from './http.js';
import { statusBytes } from './proc.js';
import { createRawHttpClient, type RawHttpClient } from './raw-http.js';
import { createWorkspace, startServe, type ServeProcess } from './serve.js';
import { median, summarize } from './stats.js';
import { sawAdded, subscribeMany, withTimeout, type Subscriber } from './subscribers.js';
import { allConnected } from './startup.js';

/**
 * One point of the scale curves (B8): a real `switchboard serve` with `servers` raw
 * `many-tools` stdio servers listing `tools` tools in all. Measures a warm start (second start on
 * the same database) → `/ready`, `GET /tools` plain and 304, one REST tool call, a one-server
 * change (`add_tool`) fanned out to `subscribers` WebSocket subscribers, the first `GET /tools`
 * after that change, and the daemon's RSS (after a full GC) once everything is connected.
 */
export interface ScalePoint {
  servers: number;
  tools: number;
}

export interface ScaleSample extends ScalePoint {
  bodyBytes: number;
  /** Spawn → `/ready` 200 and → every server connected, warm cache; medians over the warm starts. */
  warmReadyMs: number;
  warmAllConnectedMs: number;
  listP50Ms: number;
  notModifiedP50Ms: number;
  callP50Ms: number;
  /** `add_tool` call sent → the last subscriber has the `tools.changed` naming the new tool. */
  fanoutP50Ms: number;
  /** The first `GET /tools` after that change (the body is built again) and the one after it. */
  listAfterChangeP50Ms: number;
  listCachedAfterChangeP50Ms: number;
  rssBytes: number;
  /** V8 heap in use after the same full GC (issue #27: the heap per 10 000 tools). */
  heapUsedBytes: number;
}

export interface ScaleOptions {
  subscribers: number;
  warmStarts: number;
  changes: number;
  calls: number;
}

const READY_POLL_MS = 5;
const READY_TIMEOUT_MS = 120_000;
const EVENT_TIMEOUT_MS = 30_000;

function serverName(i: number): string {
  return `s${String(i).padStart(3, '0')}`;
}

/** `count` many-tools servers s001…, `total` tools between them (the remainder goes to the first ones). */
export function manyToolsServers(count: number, total: number): Record<string, ServerConfig> {
  const servers: Record<string, ServerConfig> = {};
  const base = Math.floor(total / count);
  for (let i = 1; i <= count; i++) {
    const tools = base + (i <= total % count ? 1 : 0);
    // Distinct env per server: discovery reports identical connections under two names as shadowed.
    servers[serverName(i)] = fixtureServerConfig('many-tools', { env: { TOOLS: String(tools), BENCH_INSTANCE: serverName(i) } });
  }
  return servers;
}

async function waitReady(http: HttpClient, serve: ServeProcess): Promise<number> {
  const deadline = performance.now() + READY_TIMEOUT_MS;
  for (;;) {
    const res = await http.get('/ready');
    if (res.status === 200) return performance.now() - serve.spawnedAt;
    if (res.status !== 503) throw new Error(`GET /ready: HTTP ${res.status}`);
    if (performance.now() > deadline) throw new Error(`/ready not 200 within ${READY_TIMEOUT_MS / 1000} s`);
    await sleep(READY_POLL_MS);
  }
}

async function timedP50(call: () => Promise<unknown>, n: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call();
    samples.push(performance.now() - t0);
  }
  return summarize(samples).p50;
}

export async function measureScalePoint(point: ScalePoint, options: ScaleOptions, ctx: BenchContext): Promise<ScaleSample> {
  const servers = manyToolsServers(point.servers, point.tools);
  const workspace = await createWorkspace();
  const profile = ctx.cpuProfileDir ? { cpuProfileDir: ctx.cpuProfileDir } : {};
  try {
    // Starts 0 (cold) fills the tool cache; the rest are warm, and the last one stays up for the rest.
    const warmReady: number[] = [];
    const warmAll: number[] = [];
    let serve: ServeProcess | undefined;
    for (let start = 0; start <= options.warmStarts; start++) {
      const current = await startServe({ servers, workspace, exposeGc: true, ...profile });
      serve = current;
      const http = createHttpClient(await current.listening, { connections: 1 });
      let ready: number;
      let all: number;
      try {
        ready = await waitReady(http, current);
        all = await allConnected(http, point.servers, current.spawnedAt, READY_TIMEOUT_MS);
      } catch (err) {
        // Not left running behind a failed start (the finally below only knows the last daemon once it is up).
        await stopChecked(current, ctx);
        throw err;
      } finally {
        http.close();
      }
      if (start > 0) {
        warmReady.push(ready);
        warmAll.push(all);
      }
      if (start < options.warmStarts) await stopChecked(serve, ctx);
    }
    const daemon = serve as ServeProcess;
    let http: HttpClient | undefined;
    let raw: RawHttpClient | undefined;
    let subscribers: Subscriber[] = [];
    try {
      const url = await daemon.listening;
      http = createHttpClient(url, { connections: 1 });
      const client = http;
      const first = expectStatus(await client.get('/tools'), 200, 'GET /tools');
      const listed = (JSON.parse(first.body.toString('utf8')) as { tools: unknown[] }).tools.length;
      if (listed !== point.tools) throw new Error(`GET /tools listed ${listed} tools, expected ${point.tools}`);
      const etag = first.headers.etag as string;
      const rawClient = await createRawHttpClient(url);
      raw = rawClient;
      const plain = async (): Promise<void> => {
        const res = await rawClient.get('/tools');
        if (res.status !== 200 || res.bytes === 0) throw new Error(`GET /tools: HTTP ${res.status}, ${res.bytes} bytes`);
      };
      const revalidate = async (): Promise<void> => {
        const res = await rawClient.get('/tools', { 'if-none-match': etag });
        if (res.status !== 304) throw new Error(`GET /tools If-None-Match: HTTP ${res.status}`);
      };
      const callBody = Buffer.from(JSON.stringify({ arguments: { text: 'hello' } }));
      const call = async (): Promise<void> => {
        expectStatus(await client.postJson(`/tools/mcp_${serverName(1)}_echo/call`, callBody), 200, 'POST echo');
      };
      await timedP50(plain, 3);
      const listP50Ms = await timedP50(plain, point.tools >= 50_000 ? 10 : 20);
      await timedP50(revalidate, 50);
      const notModifiedP50Ms = await timedP50(revalidate, 300);
      await timedP50(call, 100);
      const callP50Ms = await timedP50(call, options.calls);

      const { heapUsed: heapUsedBytes } = await daemon.gc();
      const rssBytes = statusBytes(daemon.pid, 'VmRSS');

      subscribers = await subscribeMany(url, options.subscribers);
      const fanout: number[] = [];
      const afterChange: number[] = [];
      const cachedAgain: number[] = [];
      for (let i = 0; i < options.changes + 1; i++) {
        // A different server each time, so every change re-lists one server's share of the tools.
        const server = serverName(1 + ((i * 7) % point.servers));
        const name = `added_${i}`;
        const all = Promise.all(subscribers.map((s) => sawAdded(s, `mcp_${server}_${name}`)));
        const t0 = performance.now();
        expectStatus(await client.postJson(`/tools/mcp_${server}_add_tool/call`, { arguments: { name } }), 200, 'POST add_tool');
        await withTimeout(all, EVENT_TIMEOUT_MS, `${name}: not every subscriber got its tools.changed`);
        const took = performance.now() - t0;
        const afterMs = await timedP50(plain, 1);
        const cachedMs = await timedP50(plain, 1);
        // The first change warms the path; it is not counted.
        if (i === 0) continue;
        fanout.push(took);
        afterChange.push(afterMs);
        cachedAgain.push(cachedMs);
      }
      return {
        ...point,
        bodyBytes: first.body.length,
        warmReadyMs: median(warmReady),
        warmAllConnectedMs: median(warmAll),
        listP50Ms,
        notModifiedP50Ms,
        callP50Ms,
        fanoutP50Ms: median(fanout),
        listAfterChangeP50Ms: median(afterChange),
        listCachedAfterChangeP50Ms: median(cachedAgain),
        rssBytes,
        heapUsedBytes,
      };
    } finally {
      for (const s of subscribers) s.ws.terminate();
      raw?.close();
      http?.close();
      await stopChecked(daemon, ctx);
    }
  } finally {
    await workspace.remove();
  }
}

async function stopChecked(serve: ServeProcess, ctx: BenchContext): Promise<void> {
  const stopped = await serve.stop();
  if (stopped.orphans > 0) ctx.log(`  warning: ${stopped.orphans} child process(es) outlived the daemon`);
}
