import type { Benchmark, BenchContext, BenchResult } from './lib/bench.js';
import { measureScalePoint, type ScaleOptions, type ScalePoint, type ScaleSample } from './lib/scale-point.js';
import { mib, ms, type Row } from './lib/table.js';

/**
 * B8 — scale curves (issue #17 item 3). Two curves of real daemons fronting raw `many-tools`
 * stdio servers: servers ∈ {1, 50, 200} at 10 000 tools, and tools ∈ {1 000, 10 000, 50 000} at
 * 50 servers (the point 50 × 10 000 is shared), so five daemons rather than a 3 × 3 grid of
 * nine keep the run to a few minutes on 2 cores. Each figure is shown along its curve with the
 * growth exponent between neighbouring points: log(t₂/t₁) / log(n₂/n₁), 1 = linear, > 1 =
 * worse than linear. `BENCH_B8_POINTS="1x1000,50x10000"` measures other points instead.
 */
const SUBSCRIBERS = 200;
const OPTIONS: ScaleOptions = { subscribers: SUBSCRIBERS, warmStarts: 2, changes: 5, calls: 300 };
/** An exponent up to this counts as linear: two noisy medians on a shared machine. */
const LINEAR_TOLERANCE = 1.2;

const SERVERS_CURVE: ScalePoint[] = [1, 50, 200].map((servers) => ({ servers, tools: 10_000 }));
const TOOLS_CURVE: ScalePoint[] = [1_000, 10_000, 50_000].map((tools) => ({ servers: 50, tools }));

function pointsFromEnv(): ScalePoint[] | undefined {
  const spec = process.env.BENCH_B8_POINTS;
  if (!spec) return undefined;
  return spec.split(',').map((part) => {
    const [servers, tools] = part.trim().split('x').map(Number);
    if (!servers || !tools || tools < servers * 2) throw new Error(`BENCH_B8_POINTS: bad point "${part}" (want <servers>x<tools>, ≥ 2 tools per server)`);
    return { servers, tools };
  });
}

const key = (p: ScalePoint): string => `${p.servers}x${p.tools}`;
const count = (n: number): string => n.toLocaleString('en-US');

type Metric = { label: string; pick: (s: ScaleSample) => number; format: (v: number) => string; scaled: boolean };

/** `scaled`: a figure expected to grow with the size (compared with linear); the others should stay flat. */
const METRICS: Metric[] = [
  { label: 'warm start → /ready', pick: (s) => s.warmReadyMs, format: ms, scaled: true },
  { label: 'warm start → all connected', pick: (s) => s.warmAllConnectedMs, format: ms, scaled: true },
  { label: 'GET /tools p50', pick: (s) => s.listP50Ms, format: ms, scaled: true },
  { label: 'GET /tools If-None-Match → 304 p50', pick: (s) => s.notModifiedP50Ms, format: ms, scaled: false },
  { label: 'one tool call (REST echo) p50', pick: (s) => s.callP50Ms, format: ms, scaled: false },
  { label: `add_tool on one server → all ${SUBSCRIBERS} subscribers have tools.changed, p50`, pick: (s) => s.fanoutP50Ms, format: ms, scaled: true },
  { label: 'first GET /tools after that one-server change, p50', pick: (s) => s.listAfterChangeP50Ms, format: ms, scaled: true },
  { label: 'daemon RSS after GC, all connected', pick: (s) => s.rssBytes, format: mib, scaled: true },
  { label: 'daemon V8 heap in use after GC, all connected', pick: (s) => s.heapUsedBytes, format: mib, scaled: true },
];

/** Growth exponents between neighbouring points of a curve along `size`. */
function exponents(values: number[], sizes: number[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < values.length; i++) {
    out.push(Math.log((values[i] as number) / (values[i - 1] as number)) / Math.log((sizes[i] as number) / (sizes[i - 1] as number)));
  }
  return out;
}

function curveRows(name: string, points: ScalePoint[], samples: Map<string, ScaleSample>, size: (p: ScalePoint) => number): Row[] {
  const got = points.map((p) => samples.get(key(p))).filter((s): s is ScaleSample => s !== undefined);
  if (got.length < 2) return [];
  const sizes = got.map(size);
  return METRICS.map((metric) => {
    const values = got.map(metric.pick);
    const exps = exponents(values, sizes);
    const worst = Math.max(...exps);
    return {
      id: 'B8',
      metric: `${metric.label} — ${name} ${sizes.map(count).join(' → ')}`,
      value: values.map(metric.format).join(' → '),
      baseline: '—',
      ratio: `exp ${exps.map((e) => e.toFixed(2)).join(', ')}`,
      target: metric.scaled ? `≤ linear (exp ≤ ${LINEAR_TOLERANCE})` : 'flat',
      verdict: metric.scaled ? (worst <= LINEAR_TOLERANCE ? 'met' : 'missed') : 'report',
    } satisfies Row;
  });
}

export const b8: Benchmark = {
  id: 'B8',
  title: 'scale curves: servers × tools',
  async run(ctx: BenchContext): Promise<BenchResult> {
    const custom = pointsFromEnv();
    const points = custom ?? [...SERVERS_CURVE, ...TOOLS_CURVE.filter((p) => !SERVERS_CURVE.some((q) => key(q) === key(p)))];
    const samples = new Map<string, ScaleSample>();
    for (const point of points) {
      ctx.log(`  ${point.servers} servers × ${count(point.tools)} tools…`);
      const sample = await measureScalePoint(point, OPTIONS, ctx);
      samples.set(key(point), sample);
      ctx.log(
        `    ready ${ms(sample.warmReadyMs)}, all ${ms(sample.warmAllConnectedMs)}, GET ${ms(sample.listP50Ms)}, 304 ${ms(sample.notModifiedP50Ms)}, call ${ms(sample.callP50Ms)}, fan-out ${ms(sample.fanoutP50Ms)}, GET after change ${ms(sample.listAfterChangeP50Ms)} (cached ${ms(sample.listCachedAfterChangeP50Ms)}), RSS ${mib(sample.rssBytes)}, heap ${mib(sample.heapUsedBytes)}`,
      );
    }
    const rows = custom
      ? curveRows('points', points, samples, (p) => p.tools)
      : [...curveRows(`servers (${count(10_000)} tools)`, SERVERS_CURVE, samples, (p) => p.servers), ...curveRows('tools (50 servers)', TOOLS_CURVE, samples, (p) => p.tools)];
    return { rows, data: { options: OPTIONS, samples: [...samples.values()] } };
  },
};
