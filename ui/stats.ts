import type { CallFinished, SearchStats } from './types.js';

/** Percentile of sorted values (nearest rank); null when there are none. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

const isError = (call: CallFinished): boolean => call.outcome !== 'ok';

export interface Row {
  server: string;
  tool: string;
  calls: number;
  errors: number;
  p50: number | null;
  p99: number | null;
}

/** Per server and tool over the window: calls, errors, p50 and p99 of the duration. */
export function byTool(calls: readonly CallFinished[]): Row[] {
  const groups = new Map<string, CallFinished[]>();
  for (const call of calls) {
    const key = `${call.server}\u0000${call.name}`;
    groups.set(key, [...(groups.get(key) ?? []), call]);
  }
  return [...groups.values()]
    .map((group) => {
      const durations = group.map((c) => c.durationMs).sort((a, b) => a - b);
      return {
        server: group[0]!.server,
        tool: group[0]!.name,
        calls: group.length,
        errors: group.filter(isError).length,
        p50: percentile(durations, 50),
        p99: percentile(durations, 99),
      };
    })
    .sort((a, b) => b.calls - a.calls || a.tool.localeCompare(b.tool));
}

export interface Minutes {
  /** Start of each minute, seconds since the epoch (uPlot's time axis). */
  x: number[];
  /** Calls per minute, per server. */
  perServer: Map<string, number[]>;
  /** Errors per minute, per server. */
  errorsPerServer: Map<string, number[]>;
  p50: (number | null)[];
  p99: (number | null)[];
}

/** Minute buckets of the last `minutes` minutes up to `now`. */
export function byMinute(calls: readonly CallFinished[], now: number, minutes: number): Minutes {
  const last = Math.floor(now / 60_000);
  const first = last - minutes + 1;
  const x = Array.from({ length: minutes }, (_, i) => (first + i) * 60);
  const zeros = () => new Array<number>(minutes).fill(0);
  const perServer = new Map<string, number[]>();
  const errorsPerServer = new Map<string, number[]>();
  const durations = Array.from({ length: minutes }, () => [] as number[]);
  for (const call of calls) {
    const slot = Math.floor(Date.parse(call.ts) / 60_000) - first;
    if (slot < 0 || slot >= minutes) continue;
    const server = call.server || '(unknown)';
    if (!perServer.has(server)) {
      perServer.set(server, zeros());
      errorsPerServer.set(server, zeros());
    }
    perServer.get(server)![slot]! += 1;
    if (isError(call)) errorsPerServer.get(server)![slot]! += 1;
    durations[slot]!.push(call.durationMs);
  }
  const sorted = durations.map((d) => d.sort((a, b) => a - b));
  return { x, perServer, errorsPerServer, p50: sorted.map((d) => percentile(d, 50)), p99: sorted.map((d) => percentile(d, 99)) };
}

/** The Tools view's line about search (issue #37): searches, misses, conversion, tools never found. */
export function searchSummary(stats: SearchStats): string {
  const parts = [`${stats.searches} ${stats.searches === 1 ? 'search' : 'searches'}`, `${stats.zeroResults} found nothing`];
  const { searches, hits } = stats.conversions;
  if (searches > 0) parts.push(`${Math.round((hits / searches) * 100)} % of agents' searches led to a call of a tool they returned`);
  parts.push(`${stats.neverReturned.count} ${stats.neverReturned.count === 1 ? 'tool' : 'tools'} never returned`);
  return parts.join(' · ');
}
