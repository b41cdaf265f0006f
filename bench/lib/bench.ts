import type { Row } from './table.js';

/** The contract between `bench/run.ts` and each benchmark module. */

export interface BenchContext {
  /** When set (BENCH_CPU_PROF=1), daemons write V8 CPU profiles here. */
  cpuProfileDir?: string;
  /** Progress on stderr; the table goes to stdout. */
  log(message: string): void;
}

export interface BenchResult {
  rows: Row[];
  /** Everything measured, for bench/results/*.json. */
  data: Record<string, unknown>;
}

export interface Benchmark {
  id: string;
  title: string;
  run(ctx: BenchContext): Promise<BenchResult>;
}
