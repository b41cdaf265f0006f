/**
 * `node --import tsx bench/ab.ts <old cli.js> [new cli.js] [paths]`: one run that puts two builds
 * side by side — a daemon of each, one echo-stdio server behind each, the same clients — and
 * alternates them round by round (the order rotating), so load on a shared machine hits both
 * alike. Paths: `rest` (POST /tools/mcp_echo_echo/call, one keep-alive socket), `modern` and
 * `legacy` (/mcp through the SDK Client, 2026-07-28 and a 2025-era session). Prints per path and
 * build the p50 and the daemon's CPU per call (from /proc), and new ÷ old. The path `direct` (the SDK's
 * stdio client on its own echo server, in the same rounds) adds each path's overhead over it
 * (p50 − direct p50) and the modern ÷ REST overhead ratio per build (issue #44's targets), and the
 * bench process's own CPU per call on each path (the agent's side of the critical path).
 * AB_ROUNDS (default 9) × AB_CALLS (default 500), AB_IN_FLIGHT (default 1), after AB_WARMUP (default
 * 1 000) untimed calls per path: a fresh daemon is still tiering its call path up then, so CPU per
 * call there includes V8's one-time compiling (bench/warmup-curve.ts shows where it ends, ~5 000
 * calls; AB_WARMUP=5000 measures past it). AB_PROF=<dir> writes
 * each daemon's CPU profile under <dir>/old and <dir>/new; AB_UPSTREAM=everything puts npm's
 * server-everything behind every path instead of the echo-stdio fixture (B7's second setup).
 */
import { join, resolve } from 'node:path';
import { buildFixtures } from '../test/helpers/build-fixtures.js';
import { directPath, mcpClientPath, switchboardRestPath, type CallPath } from './lib/call-paths.js';
import { connectDirectTo, type DirectClient } from './lib/direct.js';
import { echoStdioUpstream, everythingUpstream } from './lib/echo.js';
import { runRounds } from './lib/load.js';
import { REPO_ROOT, startServe } from './lib/serve.js';

const [oldCli, newCli = join(REPO_ROOT, 'dist', 'cli.js'), wanted = 'rest,modern,legacy'] = process.argv.slice(2);
if (!oldCli) throw new Error('usage: bench/ab.ts <old cli.js> [new cli.js] [rest,modern,legacy]');
const kinds = wanted.split(',').filter((kind) => kind !== 'direct');
const withDirect = wanted.split(',').includes('direct');
const rounds = Number(process.env.AB_ROUNDS ?? 9);
const callsPerRound = Number(process.env.AB_CALLS ?? 500);
const warmupCalls = Number(process.env.AB_WARMUP ?? 1000);
const inFlight = Number(process.env.AB_IN_FLIGHT ?? 1);
const upstream = process.env.AB_UPSTREAM === 'everything' ? everythingUpstream() : echoStdioUpstream();

await buildFixtures();
const builds = { old: resolve(oldCli), new: resolve(newCli) };
const daemons = await Promise.all(
  Object.entries(builds).map(async ([label, cli]) => ({
    label,
    serve: await startServe({ servers: { echo: upstream.server }, cli, ...(process.env.AB_PROF ? { cpuProfileDir: join(process.env.AB_PROF, label) } : {}) }),
  })),
);
const paths: CallPath[] = [];
let direct: DirectClient | undefined;
try {
  if (withDirect) {
    direct = await connectDirectTo(upstream.server);
    paths.push(directPath(direct, 'direct', upstream));
  }
  for (const { label, serve } of daemons) {
    const url = await serve.listening;
    for (const kind of kinds) {
      const id = `${kind}:${label}`;
      const path =
        kind === 'rest'
          ? switchboardRestPath(url, serve.pid, inFlight, id, upstream)
          : await mcpClientPath({ id, url: `${url}/mcp`, frontPid: serve.pid, tool: 'mcp_echo_echo', era: kind === 'modern' ? 'modern' : 'legacy', upstream });
      await path.check();
      paths.push(path);
    }
  }
  const results = await runRounds(paths, { rounds, callsPerRound, warmupCalls, inFlight, onRound: (r) => process.stderr.write(`round ${r}/${rounds}\n`) });
  console.log(`| path | old p50 | new p50 | new ÷ old | old CPU/call | new CPU/call | new ÷ old |`);
  console.log(`|---|---:|---:|---:|---:|---:|---:|`);
  for (const kind of kinds) {
    const o = results.get(`${kind}:old`)!;
    const n = results.get(`${kind}:new`)!;
    console.log(
      `| ${kind}${inFlight > 1 ? ` ×${inFlight}` : ''} | ${o.stats.p50!.toFixed(3)} ms | ${n.stats.p50!.toFixed(3)} ms | ${(n.stats.p50! / o.stats.p50!).toFixed(2)}× | ${o.frontCpuPerCallMs.toFixed(3)} ms | ${n.frontCpuPerCallMs.toFixed(3)} ms | ${(n.frontCpuPerCallMs / o.frontCpuPerCallMs).toFixed(2)}× |`,
    );
  }
  const floor = withDirect ? results.get('direct')!.stats.p50! : undefined;
  if (floor !== undefined) {
    console.log(`\nupstream: ${upstream.label}; direct p50 ${floor.toFixed(3)} ms; overhead = p50 − direct p50`);
    console.log(`| build | ${kinds.join(' | ')} | modern ÷ rest |`);
    console.log(`|---|${kinds.map(() => '---:|').join('')}---:|`);
    for (const label of ['old', 'new']) {
      const overhead = (kind: string): number => results.get(`${kind}:${label}`)!.stats.p50! - floor;
      const ratio = kinds.includes('modern') && kinds.includes('rest') ? `${(overhead('modern') / overhead('rest')).toFixed(2)}×` : '—';
      console.log(`| ${label} | ${kinds.map((kind) => `${overhead(kind).toFixed(3)} ms`).join(' | ')} | ${ratio} |`);
    }
    // The agent's side is on every call's critical path too: the SDK client over HTTP (fetch, SSE
    // parsing, its result check) costs the bench process more per call than a node:http REST client.
    const clientCpu = (id: string): string => `${results.get(id)!.benchCpuPerCallMs.toFixed(3)} ms`;
    console.log(
      `\nclient (bench process) CPU per call: direct ${clientCpu('direct')}; ${kinds.map((kind) => `${kind} old ${clientCpu(`${kind}:old`)} / new ${clientCpu(`${kind}:new`)}`).join('; ')}`,
    );
  }
} finally {
  await direct?.close().catch(() => undefined);
  for (const path of paths) await path.close().catch(() => undefined);
  for (const { serve } of daemons) await serve.stop();
}
