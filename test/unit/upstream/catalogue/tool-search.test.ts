import type { Tool } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { ToolCatalogue } from '../../../../src/upstream/catalogue/tool-catalogue.js';
import { tokenize, ToolSearch } from '../../../../src/upstream/catalogue/tool-search.js';

const FLAGS = { deferred: false, stale: false };

function tool(name: string, description: string, properties: Record<string, { type: string; description?: string }> = {}, title?: string): Tool {
  return { name, description, inputSchema: { type: 'object', properties }, ...(title !== undefined ? { title } : {}) };
}

/** A small catalogue shaped like real servers: overlapping words, so ranking has to work. */
function handmade(): ToolCatalogue {
  const catalogue = new ToolCatalogue();
  catalogue.setServer(
    'filesystem',
    'Test',
    [
      tool('read_file', 'Read the complete contents of a file from the file system.', { path: { type: 'string', description: 'Path of the file' } }),
      tool('write_file', 'Create a new file or completely overwrite an existing file with new content.', {
        path: { type: 'string' },
        content: { type: 'string' },
      }),
      tool('listDirectory', 'Get a detailed listing of all files and directories in a specified path.', { path: { type: 'string' } }),
      tool('search_files', 'Recursively search for files and directories matching a pattern.', { pattern: { type: 'string' } }),
      tool('move_file', 'Move or rename files and directories.', { source: { type: 'string' }, destination: { type: 'string' } }),
    ],
    FLAGS,
  );
  catalogue.setServer(
    'github',
    'Test',
    [
      tool('create_issue', 'Create a new issue in a GitHub repository.', { owner: { type: 'string' }, repo: { type: 'string' }, title: { type: 'string' } }),
      tool('createPullRequest', 'Open a new pull request.', { head: { type: 'string' }, base: { type: 'string' } }, 'Create pull request'),
      tool('search_code', 'Search for code across GitHub repositories.', { q: { type: 'string', description: 'Search query' } }),
      tool('get_file_contents', 'Get the contents of a file or directory from a GitHub repository.', { path: { type: 'string' } }),
    ],
    FLAGS,
  );
  catalogue.setServer(
    'weather',
    'Test',
    [
      tool('forecast', 'Get the weather forecast for a location.', {
        latitude: { type: 'number' },
        longitude: { type: 'number' },
        days: { type: 'number', description: 'How many days ahead' },
      }),
      tool('alerts', 'Active alerts for a US state.', { state: { type: 'string', description: 'Two-letter US state code, e.g. CA' } }),
    ],
    FLAGS,
  );
  catalogue.setServer(
    'slack',
    'Test',
    [
      tool('post_message', 'Post a message to a channel.', { channel_id: { type: 'string', description: 'The Slack channel' }, text: { type: 'string' } }),
      tool('add_reaction', 'Add an emoji reaction to a message.', { name: { type: 'string', description: 'Emoji name' } }),
    ],
    FLAGS,
  );
  return catalogue;
}

function top(search: ToolSearch, query: string, limit = 3): string[] {
  return search.search(query, { limit }).map((hit) => hit.tool.name);
}

describe('ToolSearch ranking', () => {
  const search = new ToolSearch(handmade());

  it.each([
    ['show me what is inside the config file', 'mcp_filesystem_read_file'],
    ['rename a document', 'mcp_filesystem_move_file'],
    ['open a PR on github', 'mcp_github_createPullRequest'],
    ['open an issue about a bug in my repo', 'mcp_github_create_issue'],
    ['what will the weather be like in Paris this week', 'mcp_weather_forecast'],
    ['send a note to the team channel', 'mcp_slack_post_message'],
    ['react with a thumbs up emoji', 'mcp_slack_add_reaction'],
  ])('%s → %s in the top 3', (query, expected) => {
    expect(top(search, query)).toContain(expected);
  });

  it('matches the words of snake_case and camelCase names', () => {
    expect(top(search, 'list directory', 1)).toEqual(['mcp_filesystem_listDirectory']);
    expect(top(search, 'pull request', 1)).toEqual(['mcp_github_createPullRequest']);
    expect(top(search, 'post message', 1)).toEqual(['mcp_slack_post_message']);
  });

  it('counts parameter names and descriptions', () => {
    // "days ahead" appears only in a parameter description; "state code" only in one too.
    expect(top(search, 'days ahead', 1)).toEqual(['mcp_weather_forecast']);
    expect(top(search, 'two-letter state code', 1)).toEqual(['mcp_weather_alerts']);
    expect(top(search, 'latitude', 1)).toEqual(['mcp_weather_forecast']);
  });

  it('matches the server name', () => {
    expect(top(search, 'slack', 5).sort()).toEqual(['mcp_slack_add_reaction', 'mcp_slack_post_message']);
  });

  it('scores best first, with positive scores', () => {
    const hits = search.search('file', { limit: 10 });
    expect(hits.length).toBeGreaterThan(1);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
    expect(hits.every((hit) => hit.score > 0)).toBe(true);
  });

  it('finds nothing for a query with no word in it, and does not throw', () => {
    expect(search.search('?!... ---', { limit: 10 })).toEqual([]);
    expect(search.search('the a of', { limit: 10 })).toEqual([]);
    expect(search.search('zzqxw', { limit: 10 })).toEqual([]);
  });

  it('honours limit and server', () => {
    expect(search.search('file', { limit: 2 })).toHaveLength(2);
    const hits = search.search('file contents', { limit: 10, server: 'github' });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((hit) => hit.tool.server === 'github')).toBe(true);
    expect(search.search('file', { limit: 10, server: 'nope' })).toEqual([]);
  });
});

describe('ToolSearch allows', () => {
  it('never returns a tool the filter refuses, and still fills the limit from the rest', () => {
    const search = new ToolSearch(handmade());
    const hits = search.search('file', { limit: 3, allows: (t) => t.server !== 'filesystem' });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((hit) => hit.tool.server !== 'filesystem')).toBe(true);
    expect(hits[0]!.tool.name).toBe('mcp_github_get_file_contents');
  });
});

const many = (prefix: string, n: number): Tool[] => Array.from({ length: n }, (_, i) => tool(`${prefix}_${i}`, `Tool number ${i} of ${prefix}`));

describe('ToolSearch incremental index', () => {
  it('builds nothing until the first search', () => {
    const catalogue = handmade();
    const search = new ToolSearch(catalogue);
    expect(search.indexed).toBe(0);
    search.search('file', { limit: 1 });
    expect(search.indexed).toBe(catalogue.list().length);
  });

  it('re-indexes only the server that changed', () => {
    const catalogue = new ToolCatalogue();
    for (const server of ['one', 'two', 'three']) catalogue.setServer(server, 'Test', many(server, 50), FLAGS);
    const search = new ToolSearch(catalogue);
    search.search('tool', { limit: 5 });
    expect(search.indexed).toBe(150);

    // Nothing changed: nothing indexed again.
    search.search('tool', { limit: 5 });
    expect(search.indexed).toBe(150);

    // One server's list changes: its 51 tools are indexed, no other's.
    catalogue.setServer('two', 'Test', [...many('two', 50), tool('brand_new', 'A freshly added capability')], FLAGS);
    expect(top(search, 'freshly added capability', 1)).toEqual(['mcp_two_brand_new']);
    expect(search.indexed).toBe(201);

    // A server that leaves takes its documents with it, and indexes nothing.
    catalogue.setServer('one', 'Test', [], FLAGS);
    expect(search.search('tool', { limit: 200 }).some((hit) => hit.tool.server === 'one')).toBe(false);
    expect(search.indexed).toBe(201);

    // The old definitions are gone from the index, not just hidden.
    catalogue.setServer('two', 'Test', many('two', 50), FLAGS);
    expect(search.search('freshly', { limit: 5 })).toEqual([]);
    expect(search.indexed).toBe(251);
  });

  it('returns the tools as the catalogue holds them now', () => {
    const catalogue = new ToolCatalogue();
    catalogue.setServer('s', 'Test', [tool('thing', 'Old words')], FLAGS);
    const search = new ToolSearch(catalogue);
    expect(search.search('old', { limit: 1 })[0]!.tool).toBe(catalogue.get('mcp_s_thing'));
    catalogue.setServer('s', 'Test', [tool('thing', 'New words')], FLAGS);
    const [hit] = search.search('new words', { limit: 1 });
    expect(hit!.tool).toBe(catalogue.get('mcp_s_thing'));
    expect(hit!.tool.description).toBe('New words');
  });
});

describe('tokenize', () => {
  it('splits snake_case, camelCase, kebab-case and acronyms', () => {
    expect(tokenize('mcp_github_createPullRequest')).toEqual(['mcp', 'github', 'create', 'Pull', 'Request']);
    expect(tokenize('read_file-v2')).toEqual(['read', 'file', 'v2']);
    expect(tokenize('parseHTTPResponse')).toEqual(['parse', 'HTTP', 'Response']);
  });
});

describe('ToolSearch, what is indexed and how (issue #37)', () => {
  it('leaves out the phrasing of a task: "I\'d like you to help me" searches for the rest', () => {
    const search = new ToolSearch(handmade());
    expect(top(search, "I'd like you to help me post a message, could you?")).toEqual(top(search, 'post a message'));
    expect(search.search('help me please, would you', { limit: 5 })).toEqual([]);
  });

  it('indexes annotations and what a server says of itself', () => {
    const catalogue = new ToolCatalogue();
    catalogue.setServer(
      'kv',
      'Test',
      [
        { ...tool('drop', 'Removes the value under a key.'), annotations: { destructiveHint: true } },
        { ...tool('peek', 'Returns the value under a key.'), annotations: { readOnlyHint: true, title: 'Peek at a key' } },
      ],
      FLAGS,
    );
    catalogue.setServer('other', 'Test', [tool('noop', 'Does nothing at all.')], FLAGS);
    const search = new ToolSearch(catalogue, (server) => (server === 'other' ? 'A scratchpad for notes.' : undefined));
    expect(top(search, 'destructive', 1)).toEqual(['mcp_kv_drop']);
    expect(top(search, 'read only key', 1)).toEqual(['mcp_kv_peek']);
    expect(top(search, 'peek', 1)).toEqual(['mcp_kv_peek']);
    expect(top(search, 'scratchpad notes', 1)).toEqual(['mcp_other_noop']);
  });

  it('ranks servers by their best tools, and scores best first', () => {
    const ranking = new ToolSearch(handmade()).rank('file directory path', { limit: 3 });
    expect(ranking.tools).toHaveLength(3);
    expect(ranking.servers[0]?.server).toBe('filesystem');
    expect(ranking.servers.map((s) => s.server)).toContain('github');
    for (let i = 1; i < ranking.servers.length; i++) expect(ranking.servers[i - 1]!.score).toBeGreaterThanOrEqual(ranking.servers[i]!.score);
  });

  it('refreshes one server at a time within a budget, the rest on the next call', () => {
    const catalogue = new ToolCatalogue();
    for (const server of ['one', 'two', 'three']) catalogue.setServer(server, 'Test', many(server, 10), FLAGS);
    const search = new ToolSearch(catalogue);
    expect(search.refresh(0)).toBe(true);
    expect(search.indexed).toBe(10);
    expect(search.refresh(0)).toBe(true);
    expect(search.refresh(0)).toBe(false);
    expect(search.indexed).toBe(30);
    expect(search.refresh(0)).toBe(false);
    expect(search.indexed).toBe(30);
  });
});
