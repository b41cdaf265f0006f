/**
 * `npm run bench [-- B1 B4 …]`: runs the benchmarks of issues #6 and #17 (all, or the ids given), prints
 * one markdown table on stdout (progress goes to stderr) and writes every figure to
 * bench/results/bench-<time>.json and bench/results/latest.json. BENCH_CPU_PROF=1 makes each
 * daemon write a V8 CPU profile (read them with bench/lib/cpuprofile.ts). See BENCHMARKS.md.
 */
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildFixtures } from '../test/helpers/build-fixtures.js';
import { b1 } from './b1-call-latency.js';
import { b10 } from './b10-tool-search.js';
import { b11 } from './b11-replicas.js';
import { b12 } from './b12-sandbox-start.js';
import { b13 } from './b13-result-guard.js';
import { b14 } from './b14-code-mode.js';
import { b15 } from './b15-cluster-soak.js';
import { b16 } from './b16-store-round-trip.js';
import { b17 } from './b17-nginx-keepalive.js';
import { b2 } from './b2-call-concurrency.js';
import { b3 } from './b3-startup.js';
import { b4 } from './b4-tool-list.js';
import { b5 } from './b5-events-fanout.js';
import { b6 } from './b6-idle-memory.js';
import { b7 } from './b7-peers.js';
import { b8 } from './b8-scale.js';
import { b9 } from './b9-soak.js';
import type { Benchmark, BenchContext } from './lib/bench.js';
import { REPO_ROOT } from './lib/serve.js';
import { renderTable, type Row } from './lib/table.js';

const ALL: Benchmark[] = [b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15, b16, b17];
/** Run only when named: B15 is a soak of half an hour by default. */
const NAMED_ONLY = new Set(['B15']);

const log = (message: string): void => void process.stderr.write(`${message}\n`);

async function main(): Promise<number> {
  const wanted = process.argv.slice(2).map((arg) => arg.toUpperCase());
  const unknown = wanted.filter((id) => !ALL.some((bench) => bench.id === id));
  if (unknown.length > 0) {
    log(`unknown benchmark(s): ${unknown.join(', ')}; known: ${ALL.map((b) => b.id).join(' ')}`);
    return 2;
  }
  const selected = wanted.length === 0 ? ALL.filter((bench) => !NAMED_ONLY.has(bench.id)) : ALL.filter((bench) => wanted.includes(bench.id));

  const startedAt = new Date();
  const resultsDir = join(REPO_ROOT, 'bench', 'results');
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  await mkdir(resultsDir, { recursive: true });
  const cpuProfileDir = process.env.BENCH_CPU_PROF === '1' ? join(resultsDir, `profiles-${stamp}`) : undefined;
  if (cpuProfileDir) await mkdir(cpuProfileDir, { recursive: true });

  log('building fixture bundles…');
  await buildFixtures();
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadavgAtStart: loadavg(),
    commit: gitDescribe(),
  };
  log(`machine: ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}, load ${machine.loadavgAtStart.map((l) => l.toFixed(2)).join(' ')}, commit ${machine.commit}`);

  const rows: Row[] = [];
  const results: Record<string, unknown> = {};
  let failed = 0;
  for (const bench of selected) {
    log(`${bench.id} — ${bench.title}`);
    const t0 = performance.now();
    const ctx: BenchContext = { log, ...(cpuProfileDir ? { cpuProfileDir: join(cpuProfileDir, bench.id) } : {}) };
    try {
      const result = await bench.run(ctx);
      rows.push(...result.rows);
      results[bench.id] = { title: bench.title, seconds: (performance.now() - t0) / 1000, rows: result.rows, ...result.data };
    } catch (err) {
      failed += 1;
      const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
      log(`${bench.id} failed: ${message}`);
      rows.push({ id: bench.id, metric: bench.title, value: 'failed', baseline: '—', ratio: '—', target: '—', verdict: 'missed' });
      results[bench.id] = { title: bench.title, error: message };
    }
    log(`${bench.id} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }

  const table = renderTable(rows);
  process.stdout.write(`${table}\n`);
  const file = join(resultsDir, `bench-${stamp}.json`);
  await writeFile(
    file,
    `${JSON.stringify({ startedAt: startedAt.toISOString(), machine: { ...machine, loadavgAtEnd: loadavg() }, benchmarks: selected.map((b) => b.id), results, table }, null, 2)}\n`,
  );
  await copyFile(file, join(resultsDir, 'latest.json'));
  log(`results: ${file}${cpuProfileDir ? `\nCPU profiles: ${cpuProfileDir}` : ''}`);
  return failed > 0 ? 1 : 0;
}

/** HEAD, with "+dirty" when src/ has uncommitted changes (the daemon measured is dist/, built from src/). */
function gitDescribe(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${head}+dirty` : head;
  } catch {
    return 'unknown';
  }
}

process.exitCode = await main();
