import { describe, expect, it } from 'vitest';
import { byMinute, byTool, percentile, searchSummary } from '../../ui/stats.js';
import type { CallFinished } from '../../ui/types.js';

/** The Calls view's numbers (ui/stats.ts): what the charts and the table show. */

const at = (iso: string, server: string, name: string, durationMs: number, outcome: CallFinished['outcome'] = 'ok'): CallFinished => ({
  seq: 0,
  ts: iso,
  type: 'call.finished',
  server,
  name,
  outcome,
  durationMs,
});

describe('dashboard call statistics', () => {
  it('takes percentiles by nearest rank', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNull();
  });

  it('counts calls and errors per server and tool, busiest first', () => {
    const rows = byTool([at('2026-01-01T00:00:01Z', 'a', 'x', 10), at('2026-01-01T00:00:02Z', 'a', 'x', 30, 'error'), at('2026-01-01T00:00:03Z', 'b', 'y', 5)]);
    expect(rows).toEqual([
      { server: 'a', tool: 'x', calls: 2, errors: 1, p50: 10, p99: 30 },
      { server: 'b', tool: 'y', calls: 1, errors: 0, p50: 5, p99: 5 },
    ]);
  });

  it('buckets by minute over the window, dropping what falls outside it', () => {
    const now = Date.parse('2026-01-01T00:10:30Z');
    const minutes = byMinute(
      [at('2026-01-01T00:09:10Z', 'a', 'x', 4), at('2026-01-01T00:10:05Z', 'a', 'x', 8, 'error'), at('2026-01-01T00:10:06Z', 'a', 'x', 2), at('2025-12-31T23:00:00Z', 'a', 'x', 1)],
      now,
      3,
    );
    expect(minutes.x).toEqual([Date.parse('2026-01-01T00:08:00Z') / 1000, Date.parse('2026-01-01T00:09:00Z') / 1000, Date.parse('2026-01-01T00:10:00Z') / 1000]);
    expect(minutes.perServer.get('a')).toEqual([0, 1, 2]);
    expect(minutes.errorsPerServer.get('a')).toEqual([0, 0, 1]);
    expect(minutes.p50).toEqual([null, 4, 2]);
    expect(minutes.p99).toEqual([null, 4, 8]);
  });

  it('sums up tool search for the Tools view', () => {
    const stats = { searches: 12, zeroResults: 2, conversions: { searches: 8, hits: 6, misses: 2 }, neverReturned: { count: 40, names: [] } };
    expect(searchSummary(stats)).toBe("12 searches · 2 found nothing · 75 % of agents' searches led to a call of a tool they returned · 40 tools never returned");
    expect(searchSummary({ ...stats, searches: 1, conversions: { searches: 0, hits: 0, misses: 0 }, neverReturned: { count: 1, names: [] } })).toBe(
      '1 search · 2 found nothing · 1 tool never returned',
    );
  });
});
