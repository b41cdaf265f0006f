/**
 * `node --import tsx bench/start-ab.ts <old cli.js> [new cli.js]`: B3's warm start (10 echo-stdio
 * servers, a second start on the same database) for two builds in one run, alternated, medians of
 * START_REPS (default 7): spawn → listening, → /ready 200, the daemon's CPU time at both, and VmHWM. START_SERVERS (default 10);
 * START_PROF=<dir> writes the new build's CPU profiles there.
 */
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { buildFixtures } from '../test/helpers/build-fixtures.js';
import { createWorkspace } from './lib/serve.js';
import { median } from './lib/stats.js';
import { echoStdioServers, measureServeStart, type StartSample } from './lib/startup.js';

const [oldCli, newCli = 'dist/cli.js'] = process.argv.slice(2);
if (!oldCli) throw new Error('usage: bench/start-ab.ts <old cli.js> [new cli.js]');
const reps = Number(process.env.START_REPS ?? 7);
const servers = echoStdioServers(Number(process.env.START_SERVERS ?? 10));
await buildFixtures();
const builds = [
  ['old', resolve(oldCli)],
  ['new', resolve(newCli)],
] as const;
const samples = new Map<string, StartSample[]>(builds.map(([label]) => [label, []]));
for (let rep = 0; rep < reps; rep++) {
  for (const [label, cli] of rep % 2 === 0 ? builds : [...builds].reverse()) {
    const workspace = await createWorkspace();
    try {
      const log = (m: string): void => void process.stderr.write(`${m}\n`);
      await measureServeStart(servers, workspace, { log }, cli);
      const prof = label === 'new' && process.env.START_PROF ? { cpuProfileDir: process.env.START_PROF } : {};
      const warm = await measureServeStart(servers, workspace, { log, ...prof }, cli);
      samples.get(label)!.push(warm);
      log(
        `${label} #${rep + 1}: listening ${warm.listeningMs.toFixed(0)} ms, ready ${warm.readyMs.toFixed(0)} ms, CPU ${warm.cpuListeningMs} / ${warm.cpuReadyMs} ms, VmHWM ${(warm.peakRssBytes / 2 ** 20).toFixed(1)} MiB, load ${loadavg()[0]!.toFixed(1)}`,
      );
    } finally {
      await workspace.remove();
    }
  }
}
const pick = (label: string, key: keyof StartSample): number => median(samples.get(label)!.map((s) => s[key] as number));
console.log(`| warm start, ${Object.keys(servers).length} servers | old | new | new ÷ old |`);
console.log('|---|---:|---:|---:|');
for (const [key, unit, scale] of [
  ['listeningMs', 'ms', 1],
  ['readyMs', 'ms', 1],
  ['cpuListeningMs', 'ms', 1],
  ['cpuReadyMs', 'ms', 1],
  ['peakRssBytes', 'MiB', 2 ** 20],
] as const) {
  const [o, n] = [pick('old', key) / scale, pick('new', key) / scale];
  console.log(`| ${key} | ${o.toFixed(unit === 'ms' ? 0 : 1)} ${unit} | ${n.toFixed(unit === 'ms' ? 0 : 1)} ${unit} | ${(n / o).toFixed(2)}× |`);
}
