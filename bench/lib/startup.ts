import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerConfig } from '../../src/config/types.js';
import { fixtureServerConfig } from '../../test/helpers/fixtures.js';
import type { BenchContext } from './bench.js';
import { createHttpClient, type HttpClient } from './http.js';
import { mcpHubReady, startMcpHub } from './peers.js';
import { cpuTimeMs, statusBytes } from './proc.js';
import { startServe, type Workspace } from './serve.js';

/**
 * Start → ready of a real process with N echo-stdio servers: a Switchboard daemon (B3, B7) and
 * mcp-hub (B7). Every time is from just before spawn.
 */

const READY_POLL_MS = 5;
const READY_TIMEOUT_MS = 60_000;
const ALL_CONNECTED_TIMEOUT_MS = 60_000;

/** `count` echo-stdio servers named echo01, echo02, …, each with its own `BENCH_INSTANCE`. */
export function echoStdioServers(count: number): Record<string, ServerConfig> {
  const servers: Record<string, ServerConfig> = {};
  for (let i = 1; i <= count; i++) {
    const name = `echo${String(i).padStart(2, '0')}`;
    // Distinct env: discovery reports identical connections under two names as shadowed.
    servers[name] = fixtureServerConfig('echo-stdio', { env: { BENCH_INSTANCE: name } });
  }
  return servers;
}

export interface StartSample {
  listeningMs: number;
  readyMs: number;
  /**
   * The daemon's CPU time (user + sys, /proc/<pid>/stat, 10 ms ticks) when "listening" was read,
   * and at `/ready` 200: load disturbs it less than wall time.
   */
  cpuListeningMs: number;
  cpuReadyMs: number;
  toolsMs: number;
  allConnectedMs: number;
  peakRssBytes: number;
  tools: number;
  deferredTools: number;
}

/**
 * One `switchboard serve` start on `workspace` (a fresh one = cold cache, a used one = warm): spawn →
 * "listening", → `/ready` 200 (polled every 5 ms), → the first successful `GET /tools` (sent as
 * soon as the port is known; it waits for the startup gate itself), → every server connected.
 */
export async function measureServeStart(servers: Record<string, ServerConfig>, workspace: Workspace, ctx: BenchContext, cli?: string): Promise<StartSample> {
  const expectedTools = Object.keys(servers).length * 3;
  const serve = await startServe({ servers, workspace, ...(ctx.cpuProfileDir ? { cpuProfileDir: ctx.cpuProfileDir } : {}), ...(cli ? { cli } : {}) });
  // Two connections: /ready polls on one while GET /tools waits for the gate on the other.
  let http: HttpClient | undefined;
  try {
    const url = await serve.listening;
    const cpuListeningMs = cpuTimeMs(serve.pid);
    const listeningMs = (serve.listeningAt() as number) - serve.spawnedAt;
    http = createHttpClient(url, { connections: 2 });
    const client = http;
    let cpuReadyMs = Number.NaN;
    const ready = (async () => {
      const deadline = performance.now() + READY_TIMEOUT_MS;
      for (;;) {
        const res = await client.get('/ready');
        if (res.status === 200) {
          cpuReadyMs = cpuTimeMs(serve.pid);
          return performance.now() - serve.spawnedAt;
        }
        if (res.status !== 503) throw new Error(`GET /ready: HTTP ${res.status}`);
        if (performance.now() > deadline) throw new Error(`/ready not 200 within ${READY_TIMEOUT_MS / 1000} s`);
        await sleep(READY_POLL_MS);
      }
    })();
    const tools = (async () => {
      const res = await client.get('/tools');
      const at = performance.now() - serve.spawnedAt;
      if (res.status !== 200) throw new Error(`GET /tools: HTTP ${res.status} ${res.body.toString('utf8').slice(0, 300)}`);
      const body = JSON.parse(res.body.toString('utf8')) as { tools: Array<{ deferred: boolean }> };
      return { at, count: body.tools.length, deferred: body.tools.filter((t) => t.deferred).length };
    })();
    const [readyMs, listed] = await Promise.all([ready, tools]);
    if (listed.count !== expectedTools) throw new Error(`first /tools listed ${listed.count} tools, expected ${expectedTools}`);
    const allConnectedMs = await allConnected(client, Object.keys(servers).length, serve.spawnedAt);
    return {
      listeningMs,
      readyMs,
      cpuListeningMs,
      cpuReadyMs,
      toolsMs: listed.at,
      allConnectedMs,
      peakRssBytes: statusBytes(serve.pid, 'VmHWM'),
      tools: listed.count,
      deferredTools: listed.deferred,
    };
  } finally {
    http?.close();
    const stopped = await serve.stop();
    if (stopped.orphans > 0) ctx.log(`  warning: ${stopped.orphans} child process(es) outlived the daemon`);
  }
}

/** Polls /servers until all `count` are connected (warm starts finish connecting after /ready). */
export async function allConnected(http: HttpClient, count: number, spawnedAt: number, timeoutMs = ALL_CONNECTED_TIMEOUT_MS): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const res = await http.get('/servers');
    const { servers } = JSON.parse(res.body.toString('utf8')) as { servers: Array<{ status: string }> };
    if (servers.length === count && servers.every((s) => s.status === 'connected')) return performance.now() - spawnedAt;
    await sleep(25);
  }
  throw new Error(`not all ${count} servers connected within ${timeoutMs / 1000} s`);
}

export interface PeerStartSample {
  listeningMs: number;
  readyMs: number;
  peakRssBytes: number;
}

/**
 * One mcp-hub start with `servers`, in a fresh temp HOME (mcp-hub keeps no tool cache, so there is
 * no warm start to tell apart): spawn → listening (it binds before connecting anything) → its
 * health state `ready`, which it reaches once every server has connected (`GET /api/health`,
 * polled every 5 ms like Switchboard's `/ready`).
 */
export async function measureMcpHubStart(servers: Record<string, ServerConfig>, ctx: BenchContext): Promise<PeerStartSample> {
  const hub = await startMcpHub(servers);
  let http: HttpClient | undefined;
  try {
    http = createHttpClient(await hub.listening, { connections: 1 });
    const readyAt = await mcpHubReady(hub, http, Object.keys(servers).length, { pollMs: READY_POLL_MS, timeoutMs: READY_TIMEOUT_MS });
    return {
      listeningMs: (hub.listeningAt() as number) - hub.spawnedAt,
      readyMs: readyAt - hub.spawnedAt,
      peakRssBytes: statusBytes(hub.pid, 'VmHWM'),
    };
  } finally {
    http?.close();
    const stopped = await hub.stop();
    if (stopped.orphans > 0) ctx.log(`  warning: ${stopped.orphans} child process(es) outlived mcp-hub`);
  }
}
