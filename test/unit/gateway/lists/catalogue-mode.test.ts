import type { Tool } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import type { AgentRef } from '../../../../src/gateway/agents/agent-ref.js';
import { CatalogueModes, type ToolSearcher } from '../../../../src/gateway/lists/catalogue-mode.js';
import { McpLists } from '../../../../src/gateway/lists/agent-lists.js';
import { META_TOOLS } from '../../../../src/gateway/lists/meta-tool-defs.js';
import { compileAgentView } from '../../../../src/gateway/agents/agent-view.js';
import { ToolCatalogue } from '../../../../src/upstream/catalogue/tool-catalogue.js';

/**
 * The mode decision and the meta-tools' lookups (SPEC §13) over a real catalogue, with a searcher
 * of the test's own (word overlap over name and description): the index is injected, so the real
 * one replaces it without any change here.
 */

const tool = (name: string, description: string, readOnly = false): Tool => ({
  name,
  description,
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  ...(readOnly ? { annotations: { readOnlyHint: true } } : {}),
});

function setUp(
  settings: {
    mode?: 'full' | 'search' | 'auto';
    searchAbove?: number;
    pinned?: string[];
    agents?: Record<string, { catalogue?: 'full' | 'search' | 'auto'; pinned?: string[] }>;
    hasCodeMode?: (agent: AgentRef | undefined) => boolean;
  } = {},
) {
  const catalogue = new ToolCatalogue();
  catalogue.setServer('files', 'Test', [tool('read_file', 'Reads a file from disk', true), tool('write_file', 'Writes a file to disk')], { deferred: false, stale: false });
  catalogue.setServer('git', 'Test', [tool('commit', 'Records changes in the repository'), tool('log', 'Shows the commit history', true)], { deferred: false, stale: false });
  const manager = { getCatalogue: () => catalogue, identity: { id: 'self' } };
  const searched: string[] = [];
  const searcher: ToolSearcher = (query, { limit, server, allows }) => {
    searched.push(query);
    const words = query.toLowerCase().split(/\s+/);
    const tools = catalogue
      .list()
      .filter((t) => (server === undefined || t.server === server) && (allows?.(t) ?? true))
      .map((t) => ({ tool: t, score: words.filter((w) => `${t.name} ${t.description}`.toLowerCase().includes(w)).length }))
      .filter((hit) => hit.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, limit);
    return { tools, servers: [...new Set(tools.map((hit) => hit.tool.server))].map((name) => ({ server: name, score: 1 })) };
  };
  const lists = new McpLists(manager as never);
  const modes = new CatalogueModes(lists, manager, { ...settings, searcher, agentSettings: (name) => settings.agents?.[name] });
  return { catalogue, modes, searched };
}

const names = (tools: Tool[]): string[] => tools.map((t) => t.name).sort();
const reader: AgentRef = { name: 'reader', view: compileAgentView({ access: 'read' }) };

describe('CatalogueModes', () => {
  it('auto is full up to searchAbove tools in the caller\u2019s view, search above', () => {
    const { modes } = setUp({ searchAbove: 2 });
    expect(modes.modeOf(undefined)).toBe('search');
    expect(modes.modeOf(reader)).toBe('full');
    expect(names(modes.tools(reader))).toEqual(['mcp_files_read_file', 'mcp_git_log']);
    expect(names(modes.tools(undefined))).toEqual(META_TOOLS.map((t) => t.name).sort());
    expect(setUp({ searchAbove: 4 }).modes.modeOf(undefined)).toBe('full');
  });

  it('lists pinned tools of the view beside the meta-tools; an agent\u2019s own settings win', () => {
    const { modes } = setUp({ mode: 'search', pinned: ['mcp_git_*'], agents: { reader: { pinned: ['*file*'] }, other: { catalogue: 'full' } } });
    expect(names(modes.tools(undefined))).toEqual(['call_tool', 'describe_tools', 'mcp_git_commit', 'mcp_git_log', 'search_tools']);
    expect(names(modes.tools(reader))).toEqual(['call_tool', 'describe_tools', 'mcp_files_read_file', 'search_tools']);
    expect(modes.modeOf({ name: 'other' })).toBe('full');
  });

  it('searches through the injected searcher, within the view, answering full-list definitions', async () => {
    const { modes, searched } = setUp({ mode: 'search' });
    const search = async (...args: Parameters<typeof modes.search>): Promise<string[]> => (await modes.search(...args)).tools.map((t) => t.name);
    expect(await search('file disk', 5, undefined, undefined)).toEqual(['mcp_files_read_file', 'mcp_files_write_file']);
    expect(await search('file disk', 1, undefined, undefined)).toHaveLength(1);
    expect(await search('file disk repository', 5, 'git', undefined)).toEqual(['mcp_git_commit']);
    expect(await search('file disk', 5, undefined, reader)).toEqual(['mcp_files_read_file']);
    expect(searched).toHaveLength(4);
    // The map names the rest of the matched servers' tools, then the other servers of the view whole, within the view only.
    expect((await modes.search('file disk', 1, undefined, undefined)).related).toEqual([
      { server: 'files', tools: [{ name: 'mcp_files_write_file', about: 'Writes a file to disk' }], names: [], more: 0 },
      { server: 'git', tools: [], names: ['mcp_git_commit', 'mcp_git_log'], more: 0 },
    ]);
    expect((await modes.search('commit', 1, undefined, reader)).related).toEqual([{ server: 'files', tools: [], names: ['mcp_files_read_file'], more: 0 }]);
    // A search kept to one server names no other.
    expect((await modes.search('commit', 1, 'git', undefined)).related).toEqual([
      { server: 'git', tools: [{ name: 'mcp_git_log', about: 'Shows the commit history' }], names: [], more: 0 },
    ]);
    const [found] = (await modes.search('commit history', 1, undefined, undefined)).tools;
    expect(found).toEqual(modes.definition('mcp_git_log', undefined));
    expect(found).toMatchObject({ description: 'Shows the commit history', inputSchema: { type: 'object' } });
    expect(modes.definition('mcp_files_write_file', reader)).toBeUndefined();
  });

  it('dispatches a meta-tool name in search mode always, in full mode only when the view has no such tool', () => {
    const { modes, catalogue } = setUp({ mode: 'full' });
    expect(modes.isMetaCall('call_tool', undefined)).toBe(true);
    expect(modes.isMetaCall('mcp_git_log', undefined)).toBe(false);
    catalogue.setServer('raw', 'Test', [tool('call_tool', 'A tool of its own')], { deferred: false, stale: false, prefix: '' });
    expect(modes.isMetaCall('call_tool', undefined)).toBe(false);
    expect(setUp({ mode: 'search' }).modes.isMetaCall('call_tool', undefined)).toBe(true);
  });

  it('lists run_script to a caller with code mode in either mode, and dispatches it unless the view has such a tool (issue #39)', () => {
    const coder: AgentRef = { name: 'coder' };
    for (const mode of ['full', 'search'] as const) {
      const { modes } = setUp({ mode, hasCodeMode: (agent) => agent?.name === 'coder' });
      expect(modes.tools(coder).at(-1)?.name).toBe('run_script');
      expect(modes.tools(reader).map((t) => t.name)).not.toContain('run_script');
      expect(modes.isMetaCall('run_script', coder)).toBe(true);
    }
    const { modes, catalogue } = setUp({ mode: 'search' });
    catalogue.setServer('raw', 'Test', [tool('run_script', 'A tool of its own')], { deferred: false, stale: false, prefix: '' });
    expect(modes.isMetaCall('run_script', undefined)).toBe(false);
  });
});
