/** Order statistics over raw samples; nothing here knows what is being measured. */

/** The `p`-th percentile (0–100) by linear interpolation between closest ranks. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return percentileSorted(sorted, p);
}

function percentileSorted(sorted: readonly number[], p: number): number {
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const low = sorted[lo] as number;
  const high = sorted[hi] as number;
  return low + (high - low) * (rank - lo);
}

export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

export interface Summary {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  const mean = n === 0 ? Number.NaN : sorted.reduce((sum, x) => sum + x, 0) / n;
  return {
    n,
    min: sorted[0] ?? Number.NaN,
    p50: percentileSorted(sorted, 50),
    p90: percentileSorted(sorted, 90),
    p99: percentileSorted(sorted, 99),
    max: sorted[n - 1] ?? Number.NaN,
    mean,
  };
}

/** The median of each field over several rounds: one noisy round cannot move a figure alone. */
export function medianOf<T extends Record<string, number>>(rounds: readonly T[]): T {
  const first = rounds[0];
  if (!first) throw new Error('medianOf needs at least one round');
  const out: Record<string, number> = {};
  for (const key of Object.keys(first)) out[key] = median(rounds.map((round) => round[key] as number));
  return out as T;
}
