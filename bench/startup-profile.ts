/**
 * `node --import tsx bench/startup-profile.ts [dir]`: one warm start of `switchboard serve` with
 * START_SERVERS (default 10) echo-stdio servers under `--cpu-prof` (a cold start on the same
 * database first fills the tool cache), and where its CPU went, by module: self and inclusive
 * time from the profile's start to "listening", and from "listening" to `/ready` 200. The bundle
 * is one file per chunk, so each frame is placed by the `// <path>` header esbuild writes above
 * every module it bundles. Also prints the daemon's CPU time (user + sys, /proc/<pid>/stat) at
 * both moments, which descheduling on a loaded box disturbs less than wall time (issue #44).
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { buildFixtures } from '../test/helpers/build-fixtures.js';
import { createHttpClient } from './lib/http.js';
import { cpuTimeMs as cpuMs } from './lib/proc.js';
import { createWorkspace, startServe } from './lib/serve.js';
import { echoStdioServers, measureServeStart } from './lib/startup.js';

interface Frame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: Frame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const dir = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'switchboard-prof-'));
const servers = echoStdioServers(Number(process.env.START_SERVERS ?? 10));
const marksFile = join(dir, 'marks.json');
// PROF_REUSE=1: analyse the profile and marks of an earlier run in `dir` again.
const marks = process.env.PROF_REUSE ? (JSON.parse(readFileSync(marksFile, 'utf8')) as Marks) : await profiledWarmStart();
writeFileSync(marksFile, JSON.stringify(marks));

interface Marks {
  listeningUs: number;
  readyUs: number;
  cpuListening: number;
  cpuReady: number;
}
async function profiledWarmStart(): Promise<Marks> {
  await buildFixtures();
  const workspace = await createWorkspace();
  const log = (m: string): void => void process.stderr.write(`${m}\n`);
  const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);
  try {
    await measureServeStart(servers, workspace, { log });
    const serve = await startServe({ servers, workspace, cpuProfileDir: dir });
    const url = await serve.listening;
    const listeningUs = nowUs();
    const cpuListening = cpuMs(serve.pid);
    const http = createHttpClient(url);
    for (;;) {
      if ((await http.get('/ready')).status === 200) break;
      await sleep(5);
    }
    const done = { listeningUs, readyUs: nowUs(), cpuListening, cpuReady: cpuMs(serve.pid) };
    http.close();
    await serve.stop();
    return done;
  } finally {
    await workspace.remove();
  }
}

const file = readdirSync(dir)
  .filter((f) => f.endsWith('.cpuprofile'))
  .sort()
  .at(-1);
if (!file) throw new Error(`no profile in ${dir}`);
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;

/** Per bundled file: the line each module starts at, from esbuild's `// <path>` headers. */
const headers = new Map<string, Array<[number, string]>>();
function moduleOf(frame: Frame): string {
  if (!frame.url) return frame.functionName || '(anonymous)';
  if (frame.url.startsWith('node:')) return 'node: internals';
  if (!frame.url.startsWith('file:')) return 'other';
  const path = fileURLToPath(frame.url);
  if (!path.includes('/dist/')) return path.includes('/node_modules/') ? packageOf(path) : 'other';
  let starts = headers.get(path);
  if (!starts) {
    starts = [];
    readFileSync(path, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        // An ES module's header comment, or a CommonJS module's wrapper key.
        const m = /^\/\/ (\S*(?:src|node_modules)\/\S+)$/.exec(line) ?? /^ {2}"(\S*node_modules\/[^"]+)"\(exports, module\)/.exec(line);
        if (m) starts!.push([i, (m[1] as string).replace(/^(\.\.\/)+[^/]+\/(?=node_modules\/)/, '')]);
      });
    headers.set(path, starts);
  }
  let found = 'dist (chunk glue)';
  for (const [line, module] of starts) {
    if (line > frame.lineNumber) break;
    found = module;
  }
  return found.startsWith('node_modules/') ? packageOf(found) : found.replace(/\/[^/]+$/, '/');
}
function packageOf(path: string): string {
  return /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? path;
}

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const phases = [
  ['start → listening', profile.startTime, marks.listeningUs],
  ['listening → /ready', marks.listeningUs, marks.readyUs],
] as const;
const sums = phases.map(() => ({ self: new Map<string, number>(), incl: new Map<string, number>(), busy: 0, idle: 0 }));
let t = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i] ?? 0;
  const delta = (profile.timeDeltas[i + 1] ?? 0) / 1000;
  const phase = phases.findIndex(([, from, to]) => t >= from && t < to);
  if (phase === -1) continue;
  const sum = sums[phase]!;
  const node = byId.get(profile.samples[i] as number)!;
  if (node.callFrame.functionName === '(idle)') {
    sum.idle += delta;
    continue;
  }
  sum.busy += delta;
  const self = moduleOf(node.callFrame);
  sum.self.set(self, (sum.self.get(self) ?? 0) + delta);
  const seen = new Set<string>();
  for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(root)') continue;
    seen.add(moduleOf(frame));
  }
  for (const module of seen) sum.incl.set(module, (sum.incl.get(module) ?? 0) + delta);
}

const top = (map: Map<string, number>): string[] =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(process.env.PROF_TOP ?? 25))
    .map(([m, ms]) => `  ${ms.toFixed(1).padStart(7)} ms  ${m}`);
const out = [
  `profile ${join(dir, file)}`,
  `wall: profile start → listening ${((marks.listeningUs - profile.startTime) / 1000).toFixed(0)} ms, → /ready ${((marks.readyUs - profile.startTime) / 1000).toFixed(0)} ms`,
  `daemon CPU (user+sys): at listening ${marks.cpuListening} ms, at /ready ${marks.cpuReady} ms`,
];
phases.forEach(([name], i) => {
  const sum = sums[i]!;
  out.push('', `${name}: busy ${sum.busy.toFixed(0)} ms, idle ${sum.idle.toFixed(0)} ms`, ' self:', ...top(sum.self), ' inclusive:', ...top(sum.incl));
});
process.stdout.write(`${out.join('\n')}\n`);
