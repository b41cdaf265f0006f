import type { Benchmark, BenchContext, BenchResult } from './lib/bench.js';
import { directPath, mcpClientPath, mcpHubRestPath, switchboardRestPath, type CallPath } from './lib/call-paths.js';
import { connectDirectTo } from './lib/direct.js';
import { echoStdioUpstream, everythingUpstream, type EchoUpstream } from './lib/echo.js';
import { createHttpClient, expectStatus } from './lib/http.js';
import { runRounds, type PathResult } from './lib/load.js';
import { assertLoopbackOnly, mcpHubReady, peerLabel, startMcpHub, startMcpProxy } from './lib/peers.js';
import { createWorkspace, startServe, type StopOutcome } from './lib/serve.js';
import { median } from './lib/stats.js';
import { echoStdioServers, measureMcpHubStart, measureServeStart, type PeerStartSample, type StartSample } from './lib/startup.js';
import { peerRows, type CallResults, type SetupCalls, type StartResults } from './b7-rows.js';

/**
 * B7 — Switchboard next to the peers a user would pick instead (issue #17), all fronting the same
 * echo-stdio fixture, all in this run:
 * - REST: Switchboard's `POST /tools/mcp_echo_echo/call` vs mcp-hub's `POST /api/servers/tools`,
 *   both with the same keep-alive node:http client;
 * - `/mcp`: Switchboard's endpoint vs mcp-proxy's (`--server stream`), both with the SDK's own
 *   `Client` over Streamable HTTP, once as a 2025-era session and once pinned to 2026-07-28;
 * - the direct SDK stdio client, the floor: "overhead" = a path's p50 − the direct p50.
 * Sequential (one call at a time) and 8 in flight, rounds rotating the order of the paths; the CPU
 * of each front process per call from /proc. Then start → ready with 3 servers: Switchboard with a
 * cold and a warm tool cache against mcp-hub's start. Each Switchboard figure is shown as a ratio
 * to its peer's.
 */
const IN_FLIGHT = 8;
const SEQUENTIAL = { warmupCalls: 500, rounds: 5, callsPerRound: 200 };
const CONCURRENT = { warmupCalls: 800, rounds: 5, callsPerRound: 800, inFlight: IN_FLIGHT };
const START_SERVERS = 3;
const START_REPS = 5;

export const b7: Benchmark = {
  id: 'B7',
  title: 'peers: Switchboard vs mcp-hub (REST) and mcp-proxy (/mcp), one echo-stdio upstream; start vs mcp-hub',
  async run(ctx: BenchContext): Promise<BenchResult> {
    // Two upstream setups (issue #27): the project's fixture, and the npm server-everything.
    const setups: SetupCalls[] = [];
    for (const upstream of [echoStdioUpstream(), everythingUpstream()]) {
      ctx.log(`  upstream: ${upstream.label}`);
      setups.push({ label: upstream.label, calls: await measureCalls(ctx, upstream) });
    }
    const starts = await measureStarts(ctx);
    const [calls] = setups as [SetupCalls];
    return {
      rows: peerRows(setups, starts, IN_FLIGHT),
      data: {
        peers: { mcpHub: peerLabel('mcp-hub'), mcpProxy: peerLabel('mcp-proxy') },
        sequential: { ...SEQUENTIAL, paths: Object.fromEntries(calls.calls.sequential) },
        concurrent: { ...CONCURRENT, paths: Object.fromEntries(calls.calls.concurrent) },
        setups: setups.map(({ label, calls: c }) => ({ label, sequential: Object.fromEntries(c.sequential), concurrent: Object.fromEntries(c.concurrent) })),
        startup: { servers: START_SERVERS, reps: START_REPS, ...starts },
      },
    };
  },
};

async function measureCalls(ctx: BenchContext, upstream: EchoUpstream): Promise<CallResults> {
  // Undone in reverse order, whatever fails: clients first, then the processes.
  const cleanups: Array<() => Promise<unknown>> = [];
  const reportStop = (name: string) => (outcome: StopOutcome) => {
    if (outcome.orphans > 0) ctx.log(`  warning: ${outcome.orphans} child process(es) outlived ${name}`);
  };
  try {
    const serve = await startServe({ servers: { echo: upstream.server }, ...(ctx.cpuProfileDir ? { cpuProfileDir: ctx.cpuProfileDir } : {}) });
    cleanups.push(() => serve.stop().then(reportStop('switchboard')));
    const hub = await startMcpHub({ echo: upstream.server });
    cleanups.push(() => hub.stop().then(reportStop('mcp-hub')));
    const proxy = await startMcpProxy(upstream.server);
    cleanups.push(() => proxy.stop().then(reportStop('mcp-proxy')));
    const direct = await connectDirectTo(upstream.server);
    cleanups.push(() => direct.close());

    const serveUrl = await serve.listening;
    const probe = createHttpClient(serveUrl);
    expectStatus(await probe.get('/tools'), 200, 'GET /tools');
    probe.close();
    const hubUrl = await hub.listening;
    const hubProbe = createHttpClient(hubUrl);
    await mcpHubReady(hub, hubProbe, 1);
    hubProbe.close();
    const proxyUrl = await proxy.listening;
    assertLoopbackOnly('switchboard', serve.pid);
    assertLoopbackOnly('mcp-hub', hub.pid);
    assertLoopbackOnly('mcp-proxy', proxy.pid);
    ctx.log(`  switchboard ${serveUrl} (pid ${serve.pid}), ${peerLabel('mcp-hub')} ${hubUrl} (pid ${hub.pid}), ${peerLabel('mcp-proxy')} ${proxyUrl} (pid ${proxy.pid})`);

    const open = async (path: CallPath | Promise<CallPath>): Promise<CallPath> => {
      const opened = await path;
      cleanups.push(() => opened.close());
      await opened.check();
      return opened;
    };
    const mcpPaths = [
      await open(mcpClientPath({ id: 'switchboard-mcp-legacy', url: `${serveUrl}/mcp`, frontPid: serve.pid, tool: 'mcp_echo_echo', era: 'legacy', upstream })),
      await open(mcpClientPath({ id: 'mcp-proxy-mcp-legacy', url: `${proxyUrl}/mcp`, frontPid: proxy.pid, tool: 'echo', era: 'legacy', upstream })),
      await open(mcpClientPath({ id: 'switchboard-mcp-modern', url: `${serveUrl}/mcp`, frontPid: serve.pid, tool: 'mcp_echo_echo', era: 'modern', upstream })),
      await open(mcpClientPath({ id: 'mcp-proxy-mcp-modern', url: `${proxyUrl}/mcp`, frontPid: proxy.pid, tool: 'echo', era: 'modern', upstream })),
    ];
    const floor = await open(directPath(direct, 'direct', upstream));
    // REST clients hold one keep-alive socket per call in flight; /mcp paths share one SDK Client.
    const restPaths = async (connections: number): Promise<CallPath[]> => [
      await open(switchboardRestPath(serveUrl, serve.pid, connections, 'switchboard-rest', upstream)),
      await open(mcpHubRestPath(hubUrl, hub.pid, connections, 'echo', 'mcp-hub-rest', upstream)),
    ];

    const log = (phase: string) => (round: number, results: ReadonlyMap<string, PathResult>) =>
      ctx.log(`  ${phase} round ${round}: ${[...results].map(([id, r]) => `${id} ${roundSummary(r)}`).join(', ')}`);
    const sequential = await runRounds([floor, ...(await restPaths(1)), ...mcpPaths], { ...SEQUENTIAL, onRound: log('sequential') });
    const concurrent = await runRounds([floor, ...(await restPaths(IN_FLIGHT)), ...mcpPaths], { ...CONCURRENT, onRound: log(`${IN_FLIGHT} in flight`) });
    return { sequential, concurrent };
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((err: unknown) => ctx.log(`  cleanup: ${err instanceof Error ? err.message : String(err)}`));
    }
  }
}

/** Switchboard cold and warm, and mcp-hub, each START_REPS times, interleaved; medians. */
async function measureStarts(ctx: BenchContext): Promise<StartResults> {
  const servers = echoStdioServers(START_SERVERS);
  const cold: StartSample[] = [];
  const warm: StartSample[] = [];
  const hub: PeerStartSample[] = [];
  for (let rep = 0; rep < START_REPS; rep++) {
    // Alternate who goes first, so neither always starts on a machine still busy with the other.
    if (rep % 2 === 1) hub.push(await measureMcpHubStart(servers, ctx));
    const workspace = await createWorkspace();
    try {
      cold.push(await measureServeStart(servers, workspace, ctx));
      warm.push(await measureServeStart(servers, workspace, ctx));
    } finally {
      await workspace.remove();
    }
    if (rep % 2 === 0) hub.push(await measureMcpHubStart(servers, ctx));
    const [c, w, h] = [cold.at(-1)!, warm.at(-1)!, hub.at(-1)!];
    ctx.log(
      `  start #${rep + 1}: switchboard cold ready ${c.readyMs.toFixed(0)} ms (all connected ${c.allConnectedMs.toFixed(0)}), ` +
        `warm ready ${w.readyMs.toFixed(0)} ms (all connected ${w.allConnectedMs.toFixed(0)}); mcp-hub ready ${h.readyMs.toFixed(0)} ms`,
    );
  }
  const pick = <T>(list: T[], key: keyof T): number => median(list.map((sample) => sample[key] as number));
  return {
    cold: { listeningMs: pick(cold, 'listeningMs'), readyMs: pick(cold, 'readyMs'), allConnectedMs: pick(cold, 'allConnectedMs'), peakRssBytes: pick(cold, 'peakRssBytes') },
    warm: { listeningMs: pick(warm, 'listeningMs'), readyMs: pick(warm, 'readyMs'), allConnectedMs: pick(warm, 'allConnectedMs'), peakRssBytes: pick(warm, 'peakRssBytes') },
    hub: { listeningMs: pick(hub, 'listeningMs'), readyMs: pick(hub, 'readyMs'), peakRssBytes: pick(hub, 'peakRssBytes') },
    samples: { cold, warm, hub },
  };
}

/** The last round's p50 and calls/s, for the progress log. */
function roundSummary(result: PathResult): string {
  const last = result.rounds.at(-1);
  return last ? `${last.p50.toFixed(3)} ms / ${Math.round(last.callsPerSecond)}/s` : 'n/a';
}
