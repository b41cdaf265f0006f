import type { Benchmark, BenchContext, BenchResult } from './lib/bench.js';
import { connectDirect, type DirectClient } from './lib/direct.js';
import { ECHO_ARGS, ECHO_BODY, ECHO_PATH, ECHO_TEXT } from './lib/echo.js';
import { echoAndPolicedServers, POLICED_PATH, THREE_RULES } from './lib/policy-rules.js';
import { createHttpClient, expectStatus, type HttpClient } from './lib/http.js';
import { startHttpFloor } from './lib/http-floor.js';
import { sequentialBlock, type BlockStats } from './lib/load.js';
import { cpuTimeMs } from './lib/proc.js';
import { startServe } from './lib/serve.js';
import { medianOf } from './lib/stats.js';
import { ms, perSecond, ratio, verdict, type Row } from './lib/table.js';

/**
 * B1 — sequential `echo` calls: one keep-alive HTTP connection to a real `switchboard serve`
 * process vs the SDK Client calling the same echo-stdio fixture directly, both from the bench
 * process. A bare node:http server answering a fixed body (the "HTTP floor") is measured in the
 * same rounds, to show how much of the difference HTTP on loopback costs by itself. Rounds rotate
 * the order of the paths so drift on a shared machine hits all alike; each figure is the median
 * over rounds. CPU per call is read from /proc (daemon) and process.cpuUsage() (bench process).
 * The same daemon has a second echo server, `policed`, that three argument policies (issue #40)
 * select: its calls, in the same rounds, show what walking three CEL rules adds to a call.
 */
const WARMUP_CALLS = 2000;
const ROUNDS = 9;
const CALLS_PER_ROUND = 500;
/** Issue #6: p50 through the daemon ≤ direct p50 + 0.3 ms. */
const TARGET_EXTRA_MS = 0.3;
/** Issue #40: a call through three policy rules costs ≤ 0.05 ms more than through none. */
const TARGET_POLICY_EXTRA_MS = 0.05;

interface Path {
  name: 'daemon' | 'direct' | 'floor' | 'policed';
  call: () => Promise<unknown>;
  rounds: BlockStats[];
  /** CPU ms spent by the bench process (the client side) over all timed rounds. */
  clientCpuMs: number;
  /** CPU ms spent by the server process over all timed rounds (daemon, HTTP floor server). */
  serverCpuMs: number;
}

export const b1: Benchmark = {
  id: 'B1',
  title: 'echo call latency, sequential',
  async run(ctx: BenchContext): Promise<BenchResult> {
    const serve = await startServe({ servers: echoAndPolicedServers(), config: { policies: THREE_RULES }, ...(ctx.cpuProfileDir ? { cpuProfileDir: ctx.cpuProfileDir } : {}) });
    const floorServer = await startHttpFloor();
    const clients: HttpClient[] = [];
    let direct: DirectClient | undefined;
    try {
      const http = createHttpClient(await serve.listening, { connections: 1 });
      const floorHttp = createHttpClient(floorServer.url, { connections: 1 });
      clients.push(http, floorHttp);
      await bothListed(http);
      direct = await connectDirect('echo-stdio');
      const sdk = direct;

      const paths: Path[] = [
        { name: 'daemon', call: () => post(http), rounds: [], clientCpuMs: 0, serverCpuMs: 0 },
        { name: 'direct', call: () => sdk.client.callTool({ name: 'echo', arguments: ECHO_ARGS }), rounds: [], clientCpuMs: 0, serverCpuMs: 0 },
        { name: 'floor', call: () => post(floorHttp), rounds: [], clientCpuMs: 0, serverCpuMs: 0 },
        { name: 'policed', call: () => post(http, POLICED_PATH), rounds: [], clientCpuMs: 0, serverCpuMs: 0 },
      ];
      const [daemonPath, directPath, floorPath, policedPath] = paths as [Path, Path, Path, Path];
      await check(http, sdk);
      for (const path of paths) await sequentialBlock(path.call, WARMUP_CALLS);

      for (let round = 0; round < ROUNDS; round++) {
        // Rotate the order: the path that runs right after another may find caches cold.
        for (let k = 0; k < paths.length; k++) {
          const path = paths[(round + k) % paths.length] as Path;
          const cpu0 = process.cpuUsage();
          const server0 = path === daemonPath || path === policedPath ? cpuTimeMs(serve.pid) : path === floorPath ? cpuTimeMs(floorServer.pid) : 0;
          path.rounds.push(await sequentialBlock(path.call, CALLS_PER_ROUND));
          const cpu = process.cpuUsage(cpu0);
          path.clientCpuMs += (cpu.user + cpu.system) / 1000;
          if (path === daemonPath || path === policedPath) path.serverCpuMs += cpuTimeMs(serve.pid) - server0;
          if (path === floorPath) path.serverCpuMs += cpuTimeMs(floorServer.pid) - server0;
        }
        ctx.log(
          `  round ${round + 1}/${ROUNDS}: p50 daemon ${ms(daemonPath.rounds.at(-1)!.p50)}, three policies ${ms(policedPath.rounds.at(-1)!.p50)}, direct ${ms(directPath.rounds.at(-1)!.p50)}, http floor ${ms(floorPath.rounds.at(-1)!.p50)}`,
        );
      }

      const daemon = medianOf(daemonPath.rounds);
      const sdkStats = medianOf(directPath.rounds);
      const floor = medianOf(floorPath.rounds);
      const policed = medianOf(policedPath.rounds);
      const policyExtra = policed.p50 - daemon.p50;
      const timedCalls = ROUNDS * CALLS_PER_ROUND;
      const daemonCpuPerCall = daemonPath.serverCpuMs / timedCalls;
      const directClientCpuPerCall = directPath.clientCpuMs / timedCalls;
      const floorServerCpuPerCall = floorPath.serverCpuMs / timedCalls;
      const extra = daemon.p50 - sdkStats.p50;
      const rows: Row[] = [
        {
          id: 'B1',
          metric: 'echo p50, sequential (HTTP keep-alive)',
          value: ms(daemon.p50),
          baseline: `direct SDK ${ms(sdkStats.p50)}`,
          ratio: `${ratio(daemon.p50, sdkStats.p50)} (+${ms(extra)})`,
          target: `≤ direct + ${TARGET_EXTRA_MS} ms`,
          verdict: verdict(extra <= TARGET_EXTRA_MS),
        },
        {
          id: 'B1',
          metric: 'echo p50 through three argument policies (issue #40)',
          value: ms(policed.p50),
          baseline: `no rule applies ${ms(daemon.p50)}`,
          ratio: `${ratio(policed.p50, daemon.p50)} (+${ms(policyExtra)})`,
          target: `≤ +${TARGET_POLICY_EXTRA_MS} ms`,
          verdict: verdict(policyExtra <= TARGET_POLICY_EXTRA_MS),
        },
        {
          id: 'B1',
          metric: 'echo p99, sequential',
          value: ms(daemon.p99),
          baseline: `direct SDK ${ms(sdkStats.p99)}`,
          ratio: ratio(daemon.p99, sdkStats.p99),
          target: '—',
          verdict: 'report',
        },
        {
          id: 'B1',
          metric: 'echo calls/s, sequential',
          value: perSecond(daemon.callsPerSecond),
          baseline: `direct SDK ${perSecond(sdkStats.callsPerSecond)}`,
          ratio: ratio(daemon.callsPerSecond, sdkStats.callsPerSecond),
          target: '—',
          verdict: 'report',
        },
        {
          id: 'B1',
          metric: 'reference: bare node:http round trip p50 (HTTP floor)',
          value: ms(floor.p50),
          baseline: `direct SDK ${ms(sdkStats.p50)}`,
          ratio: `${ratio(floor.p50, sdkStats.p50)} (+${ms(floor.p50 - sdkStats.p50)})`,
          target: '—',
          verdict: 'report',
        },
        {
          id: 'B1',
          metric: 'daemon process CPU per call',
          value: ms(daemonCpuPerCall),
          baseline: `direct SDK client ${ms(directClientCpuPerCall)}`,
          ratio: ratio(daemonCpuPerCall, directClientCpuPerCall),
          target: '—',
          verdict: 'report',
        },
        {
          id: 'B1',
          metric: 'reference: bare node:http server CPU per request',
          value: ms(floorServerCpuPerCall),
          baseline: `direct SDK client ${ms(directClientCpuPerCall)}`,
          ratio: ratio(floorServerCpuPerCall, directClientCpuPerCall),
          target: '—',
          verdict: 'report',
        },
      ];
      return {
        rows,
        data: {
          warmupCalls: WARMUP_CALLS,
          rounds: ROUNDS,
          callsPerRound: CALLS_PER_ROUND,
          daemon,
          direct: sdkStats,
          httpFloor: floor,
          extraP50Ms: extra,
          threePolicies: policed,
          policyExtraP50Ms: policyExtra,
          policyCpuPerCallMs: policedPath.serverCpuMs / timedCalls,
          cpuPerCallMs: {
            daemonProcess: daemonCpuPerCall,
            benchClientViaDaemon: daemonPath.clientCpuMs / timedCalls,
            benchClientDirect: directClientCpuPerCall,
            benchClientFloor: floorPath.clientCpuMs / timedCalls,
            floorServer: floorServerCpuPerCall,
          },
          perRound: Object.fromEntries(paths.map((path) => [path.name, path.rounds])),
        },
      };
    } finally {
      for (const client of clients) client.close();
      await direct?.close();
      await floorServer.stop();
      const stopped = await serve.stop();
      if (stopped.orphans > 0) ctx.log(`  warning: ${stopped.orphans} child process(es) outlived the daemon`);
    }
  },
};

/** Both echo servers listed before anything is timed: the startup gate may open before the second connects. */
async function bothListed(http: HttpClient): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const body = expectStatus(await http.get('/tools'), 200, 'GET /tools').body.toString('utf8');
    if (body.includes('"mcp_echo_echo"') && body.includes('"mcp_policed_echo"')) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the two echo servers were not both listed within 30 s');
}

async function post(http: HttpClient, path = ECHO_PATH): Promise<void> {
  const res = await http.postJson(path, ECHO_BODY);
  if (res.status !== 200) throw new Error(`POST ${path}: HTTP ${res.status} ${res.body.toString('utf8')}`);
}

/** Both paths answer the same thing before anything is timed. */
async function check(http: HttpClient, direct: DirectClient): Promise<void> {
  const res = expectStatus(await http.postJson(ECHO_PATH, ECHO_BODY), 200, `POST ${ECHO_PATH}`);
  const fromDaemon = JSON.parse(res.body.toString('utf8')) as { content: Array<{ text?: string }> };
  const fromSdk = (await direct.client.callTool({ name: 'echo', arguments: ECHO_ARGS })) as { content: Array<{ text?: string }> };
  if (fromDaemon.content[0]?.text !== ECHO_TEXT || fromSdk.content[0]?.text !== ECHO_TEXT) {
    throw new Error(`echo answered unexpectedly: ${JSON.stringify({ fromDaemon, fromSdk })}`);
  }
}
