import { describe, expect, it } from 'vitest';
import { evaluate, HOLDOUT_FILE, loadCorpus, loadQueries, naiveSearch, words } from '../../bench/search/evaluate.js';

// The tool-search corpus and query set (bench/search, issue 23): real tool definitions captured
// from npm MCP servers, and task-phrased queries with the tools that answer them.
describe('tool-search corpus and queries', () => {
  const corpus = loadCorpus();
  const queries = loadQueries();
  const tools = new Map<string, string>();
  for (const s of corpus.servers) for (const t of s.tools) tools.set(`${s.server}/${t.name}`, t.description ?? '');

  it('holds at least 1000 tools from at least 20 packages, each with its version and a unique server name', () => {
    expect(tools.size).toBeGreaterThanOrEqual(1000);
    expect(corpus.servers.length).toBeGreaterThanOrEqual(20);
    expect(new Set(corpus.servers.map((s) => s.server)).size).toBe(corpus.servers.length);
    expect(new Set(corpus.servers.map((s) => s.package)).size).toBe(corpus.servers.length);
    for (const s of corpus.servers) {
      expect(s.version, s.package).toMatch(/^\d+\.\d+\.\d+/);
      expect(s.tools.length, s.package).toBeGreaterThan(0);
      for (const t of s.tools) {
        expect(typeof t.name).toBe('string');
        expect(t.inputSchema, `${s.server}/${t.name}`).toBeTypeOf('object');
      }
    }
    // No tool appears twice within a server.
    expect(tools.size).toBe(corpus.servers.reduce((n, s) => n + s.tools.length, 0));
  });

  it('has at least 150 distinct queries, every expected tool exists, and they span many servers', () => {
    expect(queries.length).toBeGreaterThanOrEqual(150);
    expect(new Set(queries.map((q) => q.query)).size).toBe(queries.length);
    for (const q of queries) {
      expect(q.expected.length, q.query).toBeGreaterThan(0);
      for (const name of q.expected) expect(tools.has(name), `${q.query} → ${name}`).toBe(true);
    }
    const servers = new Set(queries.flatMap((q) => q.expected.map((e) => e.split('/')[0])));
    expect(servers.size).toBeGreaterThanOrEqual(20);
    expect(queries.filter((q) => q.expected.length > 1).length).toBeGreaterThan(0);
  });

  it('has a held-out set of 80 other queries over at least 30 servers, every expected tool existing', () => {
    const holdout = loadQueries(HOLDOUT_FILE);
    expect(holdout).toHaveLength(80);
    const seen = new Set(queries.map((q) => q.query));
    for (const q of holdout) {
      expect(seen.has(q.query), q.query).toBe(false);
      seen.add(q.query);
      for (const name of q.expected) expect(tools.has(name), `${q.query} → ${name}`).toBe(true);
    }
    expect(new Set(holdout.flatMap((q) => q.expected.map((e) => e.split('/')[0]))).size).toBeGreaterThanOrEqual(30);
  });

  it('phrases queries as tasks, not as copies of the expected tool description', () => {
    // No run of 6 or more consecutive words shared with an expected tool's description.
    const copied: string[] = [];
    for (const q of [...queries, ...loadQueries(HOLDOUT_FILE)]) {
      const qw = words(q.query);
      for (const name of q.expected) {
        const text = ` ${words(tools.get(name) ?? '').join(' ')} `;
        for (let i = 0; i + 6 <= qw.length; i++) {
          if (text.includes(` ${qw.slice(i, i + 6).join(' ')} `)) copied.push(`${q.query} ~ ${name}`);
        }
      }
    }
    expect(copied).toEqual([]);
  });

  it('scores a ranking: a perfect search gets 1 everywhere, an empty one 0', async () => {
    const perfect = await evaluate((query) => queries.find((q) => q.query === query)?.expected ?? []);
    expect(perfect).toEqual({ recallAt1: 1, recallAt5: 1, recallAt10: 1, mrr: 1, n: queries.length });
    const none = await evaluate(() => []);
    expect(none).toEqual({ recallAt1: 0, recallAt5: 0, recallAt10: 0, mrr: 0, n: queries.length });
    const second = await evaluate(() => ['x/y', ...(queries[0]?.expected ?? [])], queries.slice(0, 1));
    expect(second).toMatchObject({ recallAt1: 0, recallAt5: 1, mrr: 0.5, n: 1 });
  });

  it('the naive baseline ranks something for most queries', async () => {
    const scores = await evaluate(naiveSearch(corpus));
    expect(scores.recallAt10).toBeGreaterThan(0.5);
  });
});
