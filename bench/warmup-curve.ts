/**
 * `node --import tsx bench/warmup-curve.ts <old cli.js> [new cli.js]`: what a fresh daemon's REST
 * calls cost it, block by block, from `ready` on — for two builds side by side. Each rep starts
 * one daemon of each build (the order alternating), with one echo-stdio server behind it, makes
 * CURVE_BLOCKS (default 10) × 1 000 sequential `POST /tools/mcp_echo_echo/call` on one keep-alive
 * socket, and reads the daemon's CPU (/proc) after every block. Prints the median per block and
 * build over CURVE_REPS (default 3) reps, new ÷ old, and the sums over the first and the second
 * half of the blocks.
 *
 * Why: a new daemon's first few thousand calls also pay V8 for tiering up the call path (ignition
 * → sparkplug → TurboFan, whose compile threads count in the process's CPU). `bench/ab.ts` starts
 * timing after 1 000 warm-up calls (AB_WARMUP), inside that climb: a build with more code on the
 * path climbs longer, and its per-call CPU reads higher there though it costs the same once warm.
 * This shows where the climb ends and what each build costs after it.
 */
import { resolve } from 'node:path';
import { buildFixtures } from '../test/helpers/build-fixtures.js';
import { switchboardRestPath } from './lib/call-paths.js';
import { echoStdioUpstream } from './lib/echo.js';
import { cpuTimeMs } from './lib/proc.js';
import { startServe } from './lib/serve.js';
import { median } from './lib/stats.js';

const [oldCli, newCli = 'dist/cli.js'] = process.argv.slice(2);
if (!oldCli) throw new Error('usage: bench/warmup-curve.ts <old cli.js> [new cli.js]');
const reps = Number(process.env.CURVE_REPS ?? 3);
const blocks = Number(process.env.CURVE_BLOCKS ?? 10);
const BLOCK_CALLS = 1_000;
const builds = { old: resolve(oldCli), new: resolve(newCli) } as const;
type Label = keyof typeof builds;

/** One daemon of `cli` from `ready`: its CPU in ms over each block of calls. */
async function curve(cli: string): Promise<number[]> {
  const upstream = echoStdioUpstream();
  const serve = await startServe({ servers: { echo: upstream.server }, cli });
  try {
    await serve.waitForLog((entry) => entry.msg === 'ready');
    const path = switchboardRestPath(await serve.listening, serve.pid, 1, 'rest', upstream);
    await path.check();
    const perBlock: number[] = [];
    let before = cpuTimeMs(serve.pid);
    for (let block = 0; block < blocks; block += 1) {
      for (let call = 0; call < BLOCK_CALLS; call += 1) await path.call();
      const now = cpuTimeMs(serve.pid);
      perBlock.push(now - before);
      before = now;
    }
    await path.close();
    return perBlock;
  } finally {
    await serve.stop();
  }
}

await buildFixtures();
const runs: Record<Label, number[][]> = { old: [], new: [] };
for (let rep = 0; rep < reps; rep += 1) {
  const order: Label[] = rep % 2 === 0 ? ['old', 'new'] : ['new', 'old'];
  for (const label of order) runs[label].push(await curve(builds[label]));
  process.stderr.write(`rep ${rep + 1}/${reps}\n`);
}

const at = (label: Label, block: number): number => median(runs[label].map((run) => run[block] as number));
const half = Math.floor(blocks / 2);
const sum = (label: Label, from: number, to: number): number => median(runs[label].map((run) => run.slice(from, to).reduce((a, b) => a + b, 0)));
console.log(`daemon CPU per ${BLOCK_CALLS} REST calls from ready, median of ${reps} daemons per build`);
console.log('| calls | old | new | new ÷ old |');
console.log('|---|---:|---:|---:|');
for (let block = 0; block < blocks; block += 1) {
  const o = at('old', block);
  const n = at('new', block);
  console.log(`| ${block * BLOCK_CALLS + 1}–${(block + 1) * BLOCK_CALLS} | ${o} ms | ${n} ms | ${(n / o).toFixed(2)}× |`);
}
for (const [from, to] of [
  [0, half],
  [half, blocks],
]) {
  const o = sum('old', from!, to!);
  const n = sum('new', from!, to!);
  console.log(`| sum ${from! * BLOCK_CALLS + 1}–${to! * BLOCK_CALLS} | ${o} ms | ${n} ms | ${(n / o).toFixed(2)}× |`);
}
