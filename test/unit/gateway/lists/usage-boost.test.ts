import type { Tool } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { MAX_RECENT_BOOST, PINNED_BOOST, UsageBoost } from '../../../../src/gateway/lists/usage-boost.js';
import type { AuditQuery, StoredAuditEntry } from '../../../../src/store/access-ports.js';
import { ToolCatalogue } from '../../../../src/upstream/catalogue/tool-catalogue.js';

/** Issue #37 item 4: the bounded per-agent boost and the searches' hits, on a manual clock. */

const catalogue = new ToolCatalogue();
const tool = (name: string): Tool => ({ name, description: name, inputSchema: { type: 'object' } });
catalogue.setServer('s', 'Test', [tool('a'), tool('b'), tool('c')], { deferred: false, stale: false });
const [a, b, c] = ['mcp_s_a', 'mcp_s_b', 'mcp_s_c'].map((name) => catalogue.get(name)!);
const ranking = {
  tools: [
    { tool: a!, score: 10 },
    { tool: b!, score: 9.5 },
    { tool: c!, score: 5 },
  ],
  servers: [{ server: 's', score: 10 }],
};
const none = (): boolean => false;
const names = (r: { tools: Array<{ tool: { name: string } }> }): string[] => r.tools.map((hit) => hit.tool.name);

const DAY = 86_400_000;

function entry(name: string, ts: number, agent = 'dev'): StoredAuditEntry {
  return { id: ts, ts, agent, transport: 'mcp', server: 's', kind: 'tools/call', name, outcome: 'ok', durationMs: 1, argBytes: 0, resultBytes: 0 };
}

describe('UsageBoost', () => {
  it('lifts what the agent called recently (read from the audit), within a bound, and only for that agent', async () => {
    let now = 100 * DAY;
    const asked: AuditQuery[] = [];
    const audit = { query: async (query: AuditQuery) => (asked.push(query), query.agent === 'dev' ? [5, 4, 3, 2, 1].map((i) => entry('mcp_s_b', now - i * 1000)) : []) };
    const usage = new UsageBoost(audit, () => now);
    const boosted = await usage.rerank('dev', ranking, none);
    expect(names(boosted)).toEqual(['mcp_s_b', 'mcp_s_a', 'mcp_s_c']);
    expect(boosted.tools[0]!.score).toBeCloseTo(9.5 * (1 + MAX_RECENT_BOOST), 2);
    // Bounded: far behind stays behind however often it is called.
    for (let i = 0; i < 50; i++) usage.called('dev', 'mcp_s_c', true);
    expect(names(await usage.rerank('dev', ranking, none)).at(-1)).toBe('mcp_s_c');
    // Another agent's ranking is its own; the audit is read once per agent.
    expect(names(await usage.rerank('ops', ranking, none))).toEqual(['mcp_s_a', 'mcp_s_b', 'mcp_s_c']);
    await usage.rerank('dev', ranking, none);
    expect(asked).toEqual([
      { agent: 'dev', outcome: 'ok', limit: 100 },
      { agent: 'ops', outcome: 'ok', limit: 100 },
    ]);
    // Old calls fade: four weeks on, a sixteenth of the boost is left.
    now += 28 * DAY;
    expect((await usage.rerank('dev', ranking, none)).tools.find((hit) => hit.tool === b)!.score).toBeCloseTo(9.5 * (1 + MAX_RECENT_BOOST / 16), 2);
  });

  it('lifts pinned tools, and a failed call is no use', async () => {
    const usage = new UsageBoost(undefined, () => 0);
    usage.called('dev', 'mcp_s_b', false);
    expect(names(await usage.rerank('dev', ranking, none))).toEqual(['mcp_s_a', 'mcp_s_b', 'mcp_s_c']);
    const pinned = await usage.rerank('dev', ranking, (name) => name === 'mcp_s_b');
    expect(names(pinned)).toEqual(['mcp_s_b', 'mcp_s_a', 'mcp_s_c']);
    expect(pinned.tools[0]!.score).toBeCloseTo(9.5 * (1 + PINNED_BOOST), 5);
  });

  it('counts a search as a hit when the agent calls a tool it returned within ten minutes', () => {
    let now = 0;
    const usage = new UsageBoost(undefined, () => now);
    usage.answered('dev', ['mcp_s_a', 'mcp_s_b']);
    usage.called('dev', 'mcp_s_c', true);
    usage.called('ops', 'mcp_s_a', true);
    expect(usage.conversions()).toEqual({ searches: 1, hits: 0 });
    usage.called('dev', 'mcp_s_b', false);
    expect(usage.conversions()).toEqual({ searches: 1, hits: 1 });
    // One hit per search.
    usage.called('dev', 'mcp_s_a', true);
    expect(usage.conversions()).toEqual({ searches: 1, hits: 1 });
    usage.answered('dev', ['mcp_s_a']);
    now += 11 * 60_000;
    usage.called('dev', 'mcp_s_a', true);
    expect(usage.conversions()).toEqual({ searches: 2, hits: 1 });
  });
});
