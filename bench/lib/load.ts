import { performance } from 'node:perf_hooks';
import { cpuTimeMs } from './proc.js';
import { medianOf, summarize } from './stats.js';

/**
 * Driving calls: one block of sequential or concurrent calls, and rounds over several call paths
 * that rotate their order so drift on a shared machine hits every path alike. Nothing here knows
 * what a path calls.
 */

export interface BlockStats extends Record<string, number> {
  p50: number;
  p99: number;
  callsPerSecond: number;
}

/** `calls` calls one after the other: per-call latency and overall calls/s. */
export async function sequentialBlock(call: () => Promise<unknown>, calls: number): Promise<BlockStats> {
  const samples = new Array<number>(calls);
  const started = performance.now();
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    await call();
    samples[i] = performance.now() - t0;
  }
  const elapsed = performance.now() - started;
  const summary = summarize(samples);
  return { p50: summary.p50, p99: summary.p99, callsPerSecond: (calls / elapsed) * 1000 };
}

/** `calls` calls, `inFlight` at a time: per-call latency and overall calls/s. */
export async function concurrentBlock(call: () => Promise<unknown>, calls: number, inFlight: number): Promise<BlockStats> {
  const samples: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < calls) {
      next += 1;
      const t0 = performance.now();
      await call();
      samples.push(performance.now() - t0);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const elapsed = performance.now() - started;
  const summary = summarize(samples);
  return { p50: summary.p50, p99: summary.p99, callsPerSecond: (calls / elapsed) * 1000 };
}

/** One way of making the same call, e.g. "Switchboard REST" or "mcp-proxy /mcp". */
export interface LoadPath {
  id: string;
  /** The process that answers (daemon or peer), whose CPU is charged per call; NaN for none. */
  frontPid: number;
  call(): Promise<unknown>;
}

export interface RoundsOptions {
  rounds: number;
  callsPerRound: number;
  /** Untimed calls per path before the first round. */
  warmupCalls: number;
  /** @default 1 (sequential) */
  inFlight?: number;
  /** Called after each round with its number (1-based) and every path's stats so far. */
  onRound?(round: number, results: ReadonlyMap<string, PathResult>): void;
}

export interface PathResult {
  /** The median of each figure over the rounds. */
  stats: BlockStats;
  rounds: BlockStats[];
  /** CPU ms per call of the front process, from /proc (10 ms resolution, summed over every round). */
  frontCpuPerCallMs: number;
  /** CPU ms per call of the bench process (the client side). */
  benchCpuPerCallMs: number;
}

/** Warms every path up, then runs `rounds` rounds in which every path makes `callsPerRound` calls. */
export async function runRounds(paths: readonly LoadPath[], options: RoundsOptions): Promise<Map<string, PathResult>> {
  const inFlight = options.inFlight ?? 1;
  const block = (path: LoadPath, calls: number): Promise<BlockStats> => (inFlight === 1 ? sequentialBlock(path.call, calls) : concurrentBlock(path.call, calls, inFlight));
  for (const path of paths) await block(path, options.warmupCalls);

  const totals = new Map(paths.map((path) => [path.id, { rounds: [] as BlockStats[], frontCpuMs: 0, benchCpuMs: 0 }]));
  const results = new Map<string, PathResult>();
  const timedCalls = (rounds: number): number => rounds * options.callsPerRound;
  for (let round = 0; round < options.rounds; round++) {
    for (let k = 0; k < paths.length; k++) {
      // Rotate the order: the path that runs right after another may find caches cold.
      const path = paths[(round + k) % paths.length] as LoadPath;
      const total = totals.get(path.id)!;
      const bench0 = process.cpuUsage();
      const front0 = cpuTimeMs(path.frontPid);
      total.rounds.push(await block(path, options.callsPerRound));
      const bench = process.cpuUsage(bench0);
      total.benchCpuMs += (bench.user + bench.system) / 1000;
      total.frontCpuMs += cpuTimeMs(path.frontPid) - front0;
      results.set(path.id, {
        stats: medianOf(total.rounds),
        rounds: total.rounds,
        frontCpuPerCallMs: total.frontCpuMs / timedCalls(total.rounds.length),
        benchCpuPerCallMs: total.benchCpuMs / timedCalls(total.rounds.length),
      });
    }
    options.onRound?.(round + 1, results);
  }
  return results;
}
