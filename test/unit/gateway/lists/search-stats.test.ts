import { describe, expect, it } from 'vitest';
import { SearchStats } from '../../../../src/gateway/lists/search-stats.js';

/** Issue #37 item 5: what `GET /search/stats` and `/metrics` count, and texts only when asked. */
describe('SearchStats', () => {
  it('counts searches, zero results and the tools never returned, and keeps no text by default', () => {
    const stats = new SearchStats(false);
    stats.record('read a file', ['fs_read', 'fs_write'], 'dev');
    stats.record('???', [], undefined);
    const snapshot = stats.snapshot(['fs_read', 'fs_write', 'git_log', 'git_stash'], { searches: 1, hits: 1 });
    expect(snapshot).toEqual({
      searches: 2,
      zeroResults: 1,
      conversions: { searches: 1, hits: 1, misses: 0 },
      neverReturned: { count: 2, names: ['git_log', 'git_stash'] },
    });
    expect(JSON.stringify(snapshot)).not.toContain('read a file');
  });

  it('keeps the latest texts, newest first, when the operator switches them on', () => {
    let now = Date.parse('2026-12-05T12:00:00Z');
    const stats = new SearchStats(true, () => now);
    stats.record('first', ['a'], 'dev');
    now += 1000;
    stats.record('nothing here', [], undefined);
    for (let i = 0; i < 60; i++) stats.record(`q${i}`, ['a'], undefined);
    const { queries } = stats.snapshot(['a'], { searches: 0, hits: 0 });
    expect(queries?.recent).toHaveLength(50);
    expect(queries?.recent[0]).toMatchObject({ query: 'q59', returned: 1 });
    expect(queries?.zeroResults).toEqual([{ time: '2026-12-05T12:00:01.000Z', query: 'nothing here', returned: 0 }]);
  });
});
