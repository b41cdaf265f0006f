import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/**
 * Sums self time per function in a V8 `.cpuprofile` (from `node --cpu-prof`, which the bench
 * passes to the daemon when BENCH_CPU_PROF=1). Usage:
 *
 *   node --import tsx bench/lib/cpuprofile.ts <file.cpuprofile> [top=30] [filter]
 *
 * `filter` keeps only functions whose location contains it (e.g. `dist/` for our own code).
 * BENCH_PROF_SKIP_MS=<ms> leaves out the first ms of the profile (the daemon's startup).
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface FunctionTime {
  name: string;
  location: string;
  selfMs: number;
  share: number;
}

export function selfTimes(profile: CpuProfile, options: { skipMs?: number } = {}): { totalMs: number; idleMs: number; functions: FunctionTime[] } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  const skipUs = (options.skipMs ?? 0) * 1000;
  let elapsedUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i] as number;
    elapsedUs += profile.timeDeltas[i] ?? 0;
    if (elapsedUs < skipUs) continue;
    // A sample's delta is the time until the next sample; V8 stores it one slot later.
    const delta = profile.timeDeltas[i + 1] ?? 0;
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  }
  const totals = new Map<string, FunctionTime>();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const frame = (byId.get(id) as ProfileNode).callFrame;
    totalUs += us;
    if (frame.functionName === '(idle)') idleUs += us;
    const name = frame.functionName || '(anonymous)';
    const location = frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : '';
    const key = `${name} ${location}`;
    const entry = totals.get(key) ?? { name, location, selfMs: 0, share: 0 };
    entry.selfMs += us / 1000;
    totals.set(key, entry);
  }
  const busyUs = totalUs - idleUs;
  const functions = [...totals.values()].sort((a, b) => b.selfMs - a.selfMs);
  for (const fn of functions) fn.share = busyUs > 0 ? (fn.selfMs * 1000) / busyUs : 0;
  return { totalMs: totalUs / 1000, idleMs: idleUs / 1000, functions };
}

/** Self time per package (or `node:` internals / our dist), to see where a request's time goes. */
export function byPackage(functions: readonly FunctionTime[]): Array<{ name: string; selfMs: number }> {
  const sums = new Map<string, number>();
  for (const fn of functions) {
    if (fn.name === '(idle)') continue;
    const pkg =
      /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(fn.location)?.[1] ??
      (fn.location.startsWith('node:') ? 'node: internals' : fn.location.includes('dist/') ? 'switchboard (dist)' : fn.location ? 'other' : fn.name);
    sums.set(pkg, (sums.get(pkg) ?? 0) + fn.selfMs);
  }
  return [...sums].map(([name, selfMs]) => ({ name, selfMs })).sort((a, b) => b.selfMs - a.selfMs);
}

function shortUrl(url: string): string {
  const local = url.replace(/^file:\/\//, '');
  const nm = local.lastIndexOf('node_modules/');
  if (nm !== -1) return local.slice(nm);
  const dist = local.lastIndexOf('/dist/');
  return dist !== -1 ? local.slice(dist + 1) : local;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [file, topArg, filter] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node --import tsx bench/lib/cpuprofile.ts <file.cpuprofile> [top=30] [filter]\n');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const { totalMs, idleMs, functions } = selfTimes(profile, { skipMs: Number(process.env.BENCH_PROF_SKIP_MS ?? 0) });
  const top = Number(topArg ?? 30);
  const shown = functions.filter((fn) => fn.name !== '(idle)' && (!filter || fn.location.includes(filter))).slice(0, top);
  const out = [`profile ${(totalMs / 1000).toFixed(2)} s, busy ${((totalMs - idleMs) / 1000).toFixed(2)} s`, '', 'self ms   busy%  function  location'];
  for (const fn of shown) out.push(`${fn.selfMs.toFixed(1).padStart(8)}  ${(fn.share * 100).toFixed(1).padStart(5)}%  ${fn.name}  ${fn.location}`);
  out.push('', 'by package:');
  for (const pkg of byPackage(functions).slice(0, 15)) out.push(`${pkg.selfMs.toFixed(1).padStart(8)}  ${pkg.name}`);
  process.stdout.write(`${out.join('\n')}\n`);
}
