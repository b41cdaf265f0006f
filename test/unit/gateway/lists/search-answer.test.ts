import type { Tool } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { buildAnswer, firstSentence } from '../../../../src/gateway/lists/search-answer.js';
import type { BridgedTool } from '../../../../src/upstream/catalogue/tool-bridge.js';
import { ToolCatalogue } from '../../../../src/upstream/catalogue/tool-catalogue.js';

/** The answer's shape and budget (issue #37 item 1), over a real catalogue of made-up servers. */

function catalogueOf(servers: Record<string, number>, schemaBytes = 50): ToolCatalogue {
  const catalogue = new ToolCatalogue();
  for (const [server, count] of Object.entries(servers)) {
    const tools: Tool[] = Array.from({ length: count }, (_, i) => ({
      name: `${server}_tool_${i}`,
      description: `Does thing ${i} of ${server}. More words follow here.`,
      inputSchema: { type: 'object', properties: { padding: { type: 'string', description: 'x'.repeat(schemaBytes) } } },
    }));
    catalogue.setServer(server, 'Test', tools, { deferred: false, stale: false });
  }
  return catalogue;
}

function answer(catalogue: ToolCatalogue, ranked: readonly BridgedTool[], limit: number, budget: number) {
  return buildAnswer({
    matches: ranked.slice(0, limit),
    next: ranked.slice(limit),
    servers: [...new Set(ranked.map((tool) => tool.server))],
    toolsOf: (server) => catalogue.itemsOf(server),
    budget,
  });
}

const namesIn = (related: ReturnType<typeof answer>['related']): string[] => related.flatMap((group) => [...group.tools.map((t) => t.name), ...group.names]);

describe('buildAnswer', () => {
  it('names every other tool of a small neighbourhood, each once, never a match again', () => {
    const catalogue = catalogueOf({ git: 6, fs: 3 });
    const ranked = [catalogue.get('mcp_git_git_tool_2')!, catalogue.get('mcp_fs_fs_tool_0')!];
    const { tools, related, bytes } = answer(catalogue, ranked, 1, 12_288);
    expect(tools.map((t) => t.name)).toEqual(['mcp_git_git_tool_2']);
    const named = namesIn(related);
    expect(new Set(named).size).toBe(named.length);
    expect(named).not.toContain('mcp_git_git_tool_2');
    expect(named.sort()).toEqual(
      catalogue
        .list()
        .map((t) => t.name)
        .filter((n) => n !== 'mcp_git_git_tool_2')
        .sort(),
    );
    // The next ranked tool comes first, with its first sentence; the servers' other tools by name.
    expect(related[0]).toMatchObject({ server: 'fs', tools: [{ name: 'mcp_fs_fs_tool_0', about: 'Does thing 0 of fs.' }], more: 0 });
    expect(related.find((g) => g.server === 'git')?.more).toBe(0);
    expect(bytes).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify({ tools, related })));
  });

  it('stays within the budget, counts what it leaves out, and goes a few names deep into many servers first', () => {
    const catalogue = catalogueOf({ big: 300, second: 40, third: 40 });
    const ranked = [catalogue.get('mcp_big_big_tool_0')!, catalogue.get('mcp_second_second_tool_0')!, catalogue.get('mcp_third_third_tool_0')!];
    for (const budget of [2_000, 4_000, 12_288]) {
      const { tools, related } = answer(catalogue, ranked, 1, budget);
      const size = Buffer.byteLength(JSON.stringify({ tools, related }));
      expect(size, `budget ${budget}`).toBeLessThanOrEqual(budget);
      for (const group of related) {
        const shown = group.tools.length + group.names.length;
        expect(group.more, group.server).toBe(catalogue.itemsOf(group.server).length - shown - (group.server === 'big' ? 1 : 0));
      }
      expect(related.map((g) => g.server).sort()).toEqual(['big', 'second', 'third']);
    }
  });

  it('always keeps the first match whole, and leaves later matches past its share of the budget to the map', () => {
    const catalogue = catalogueOf({ fat: 4 }, 3_000);
    const ranked = catalogue.itemsOf('fat');
    const { tools, related } = answer(catalogue, ranked, 4, 4_000);
    expect(tools.map((t) => t.name)).toEqual(['mcp_fat_fat_tool_0']);
    expect(namesIn(related).sort()).toEqual(['mcp_fat_fat_tool_1', 'mcp_fat_fat_tool_2', 'mcp_fat_fat_tool_3']);
    // Even over budget, the best match is whole.
    expect(answer(catalogue, ranked, 1, 1_024).tools).toHaveLength(1);
  });

  it('shows a match left out for the budget first in the map, with its sentence, even deep in a big server', () => {
    const catalogue = catalogueOf({ fat: 200 }, 3_000);
    const ranked = [catalogue.get('mcp_fat_fat_tool_0')!, catalogue.get('mcp_fat_fat_tool_150')!];
    // Rows that are not the tools themselves, as GET /tools/search gives them.
    const { tools, related } = buildAnswer({
      matches: ranked.map((tool) => ({ name: tool.name, schema: 'x'.repeat(3_000) })),
      matchTools: ranked,
      next: [],
      servers: ['fat'],
      toolsOf: (server) => catalogue.itemsOf(server),
      budget: 4_000,
    });
    expect(tools.map((t) => t.name)).toEqual(['mcp_fat_fat_tool_0']);
    expect(related[0]?.tools[0]).toEqual({ name: 'mcp_fat_fat_tool_150', about: 'Does thing 150 of fat.' });
  });

  it('names the rest of the view after the ranked servers: small servers whole, smallest first, none cut short', () => {
    const catalogue = catalogueOf({ big: 300, tiny: 2, small: 5, mid: 25, huge: 40 });
    const ranked = [catalogue.get('mcp_big_big_tool_0')!];
    const { related, bytes } = buildAnswer({
      matches: ranked,
      next: [],
      servers: ['big'],
      toolsOf: (server) => catalogue.itemsOf(server),
      allServers: ['big', 'tiny', 'small', 'mid', 'huge'],
      budget: 12_288,
    });
    expect(bytes).toBeLessThanOrEqual(12_288);
    // The ranked server first; then the others by size, each whole; a server past `restTools` is left out.
    expect(related.map((group) => group.server)).toEqual(['big', 'tiny', 'small', 'mid']);
    for (const group of related.slice(1)) expect(group).toMatchObject({ tools: [], more: 0 });
    expect(related[3]?.names).toHaveLength(25);
    // What the rest leaves goes back to the ranked server's names.
    expect(related[0]!.names.length).toBeGreaterThan(100);
  });

  it('shows a server\u2019s own words when it says any', () => {
    const catalogue = catalogueOf({ git: 2 });
    const { related } = buildAnswer({
      matches: [catalogue.get('mcp_git_git_tool_0')!],
      next: [],
      servers: ['git'],
      toolsOf: (server) => catalogue.itemsOf(server),
      aboutOf: () => 'Version control for the repository. Use it for commits.',
      budget: 12_288,
    });
    expect(related).toEqual([{ server: 'git', about: 'Version control for the repository.', tools: [], names: ['mcp_git_git_tool_1'], more: 0 }]);
  });
});

describe('firstSentence', () => {
  it('cuts at the first sentence or line, and caps the length', () => {
    expect(firstSentence('Reads a file. Then more.')).toBe('Reads a file.');
    expect(firstSentence('Version 1.2 of the thing\nsecond line')).toBe('Version 1.2 of the thing');
    expect(firstSentence('x'.repeat(300))).toHaveLength(110);
  });
});
