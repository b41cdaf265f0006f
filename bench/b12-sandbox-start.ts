import { performance } from 'node:perf_hooks';
import { connectToServer } from '../src/upstream/transport/client.js';
import type { ServerConfig } from '../src/config/types.js';
import { fixtureServerConfig } from '../test/helpers/fixtures.js';
import type { Benchmark, BenchContext, BenchResult } from './lib/bench.js';
import { median } from './lib/stats.js';
import { ms, ratio, type Row } from './lib/table.js';

/**
 * B12 — what the stdio sandbox (issue #42) costs at start: spawn → connected (initialize answered)
 * → first `tools/list`, through the daemon's own connect path (`connectToServer`), for one
 * echo-stdio server unsandboxed, with `sandbox: true` (network host) and with `network: "none"`.
 * The three run in turn, REPS rounds, so each sees the same machine; medians are reported, the
 * unsandboxed start is the baseline. bwrap's namespace check runs once per process: the first
 * sandboxed round pays it, the others do not (as in a daemon).
 */
const REPS = 15;

const VARIANTS: Record<string, ServerConfig['sandbox']> = {
  unsandboxed: undefined,
  'sandbox: true': true,
  'sandbox, network none': { network: 'none' },
};

async function startOnce(sandbox: ServerConfig['sandbox']): Promise<number> {
  const config: ServerConfig = { ...fixtureServerConfig('echo-stdio'), ...(sandbox === undefined ? {} : { sandbox }) };
  const started = performance.now();
  const connection = await connectToServer('bench', config, {
    inheritEnv: [],
    sandbox: { home: '/nonexistent', hidden: [], env: { PATH: process.env.PATH } },
    protocol: 'legacy',
  });
  try {
    await connection.listTools();
    return performance.now() - started;
  } finally {
    await connection.close();
  }
}

export const b12: Benchmark = {
  id: 'B12',
  title: 'stdio sandbox: spawn → connected + tools/list, sandboxed against not',
  async run(ctx: BenchContext): Promise<BenchResult> {
    const samples: Record<string, number[]> = Object.fromEntries(Object.keys(VARIANTS).map((name) => [name, []]));
    for (let rep = 0; rep < REPS; rep++) {
      const line: string[] = [];
      for (const [name, sandbox] of Object.entries(VARIANTS)) {
        const took = await startOnce(sandbox);
        samples[name]!.push(took);
        line.push(`${name} ${ms(took)}`);
      }
      ctx.log(`  #${rep + 1}: ${line.join(', ')}`);
    }
    const baseline = median(samples.unsandboxed!);
    const rows: Row[] = Object.keys(VARIANTS).map((name) => ({
      id: 'B12',
      metric: `echo-stdio, ${name}: spawn → connected + tools/list (median of ${REPS})`,
      value: ms(median(samples[name]!)),
      baseline: name === 'unsandboxed' ? '—' : `unsandboxed ${ms(baseline)}`,
      ratio: name === 'unsandboxed' ? '—' : ratio(median(samples[name]!), baseline),
      target: '—',
      verdict: 'report',
    }));
    return { rows, data: { samples } };
  },
};
