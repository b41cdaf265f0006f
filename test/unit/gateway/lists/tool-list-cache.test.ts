import type { Tool } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { ToolListCache } from '../../../../src/gateway/lists/tool-list-cache.js';
import { ToolCatalogue } from '../../../../src/upstream/catalogue/tool-catalogue.js';

/**
 * The `GET /tools` body is built from per-server fragments: a change to one server serialises
 * that server's tools again and reuses every other server's JSON, and the body stays byte for
 * byte what `JSON.stringify` of the whole list gives.
 */

const tools = (prefix: string, count: number): Tool[] =>
  Array.from({ length: count }, (_, i) => ({
    name: `${prefix}${i}`,
    description: `tool ${i} — ünïcödé`,
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  }));

const flags = { deferred: false, stale: false };

/** What `GET /tools` served before fragments: the whole list through one `JSON.stringify`. */
const wholeList = (catalogue: ToolCatalogue): string => JSON.stringify({ version: catalogue.version, tools: catalogue.list() });

describe('ToolListCache', () => {
  it('after a one-server change serialises only that server’s tools, and the body is unchanged byte for byte', () => {
    const catalogue = new ToolCatalogue();
    for (const server of ['alpha', 'beta', 'gamma']) catalogue.setServer(server, 'Test', tools('tool_', 100), flags);
    const cache = new ToolListCache();

    expect(cache.fullBody(catalogue).toString('utf8')).toBe(wholeList(catalogue));
    expect(cache.toolsSerialised).toBe(300);

    catalogue.setServer('beta', 'Test', tools('tool_', 101), flags);
    expect(cache.fullBody(catalogue).toString('utf8')).toBe(wholeList(catalogue));
    expect(cache.toolsSerialised).toBe(300 + 101);

    // The same version again is the cached Buffer: nothing serialised.
    cache.fullBody(catalogue);
    expect(cache.toolsSerialised).toBe(401);

    // A server going away costs nothing to serialise.
    catalogue.setServer('alpha', 'Test', [], flags);
    expect(cache.fullBody(catalogue).toString('utf8')).toBe(wholeList(catalogue));
    expect(cache.toolsSerialised).toBe(401);

    // A flag change (deferred → live) is a change to that server's entries.
    catalogue.setServer('gamma', 'Test', tools('tool_', 100), { deferred: true, stale: false });
    expect(cache.fullBody(catalogue).toString('utf8')).toBe(wholeList(catalogue));
    expect(cache.toolsSerialised).toBe(501);
  });

  it('rebuilds the fragment of another server whose tool a new collision renamed', () => {
    const catalogue = new ToolCatalogue();
    // Under the prefix "" both servers' names meet; `a` keeps a shared name, `b`'s gets a hash.
    catalogue.setServer('b', 'Test', [...tools('shared_', 3), ...tools('b_', 50)], { ...flags, prefix: '' });
    catalogue.setServer('c', 'Test', tools('c_', 50), { ...flags, prefix: '' });
    const cache = new ToolListCache();
    expect(cache.fullBody(catalogue).toString('utf8')).toBe(wholeList(catalogue));
    const before = cache.toolsSerialised;

    catalogue.setServer('a', 'Test', tools('shared_', 2), { ...flags, prefix: '' });
    expect(catalogue.collisions().length).toBe(2);
    expect(cache.fullBody(catalogue).toString('utf8')).toBe(wholeList(catalogue));
    // `a` (2) and `b` (53, two of them renamed) again; `c` untouched.
    expect(cache.toolsSerialised - before).toBe(2 + 53);
  });

  it('joins servers whose names interleave (prefixes of the operator’s choosing) in name order', () => {
    const catalogue = new ToolCatalogue();
    catalogue.setServer('one', 'Test', tools('x', 30), { ...flags, prefix: 'p_one_' });
    catalogue.setServer('two', 'Test', tools('y', 30), { ...flags, prefix: 'p_' });
    catalogue.setServer('three', 'Test', tools('', 30), { ...flags, prefix: 'p_one_x1' });
    // The three servers' items alternate in name order, so each server is split into several runs.
    expect(catalogue.runs().length).toBeGreaterThan(3);
    const cache = new ToolListCache();
    expect(cache.fullBody(catalogue).toString('utf8')).toBe(wholeList(catalogue));

    catalogue.setServer('three', 'Test', tools('', 31), { ...flags, prefix: 'p_one_x1' });
    const before = cache.toolsSerialised;
    expect(cache.fullBody(catalogue).toString('utf8')).toBe(wholeList(catalogue));
    expect(cache.toolsSerialised - before).toBe(31);
  });

  it('serves `?server=` from the fragment, as the filtered list would be serialised', () => {
    const catalogue = new ToolCatalogue();
    catalogue.setServer('alpha', 'Test', tools('tool_', 20), flags);
    catalogue.setServer('beta', 'Test', tools('tool_', 20), flags);
    const cache = new ToolListCache();
    cache.fullBody(catalogue);
    const before = cache.toolsSerialised;
    const filtered = (server: string): string => JSON.stringify({ version: catalogue.version, tools: catalogue.list().filter((tool) => tool.server === server) });
    expect(cache.filteredBody(catalogue, { server: 'beta' }).toString()).toBe(filtered('beta'));
    expect(cache.filteredBody(catalogue, { server: 'nobody' }).toString()).toBe(filtered('nobody'));
    expect(cache.toolsSerialised).toBe(before);
    expect(cache.filteredBody(catalogue, { server: 'beta', q: 'TOOL_1' }).toString()).toBe(
      JSON.stringify({ version: catalogue.version, tools: catalogue.list().filter((tool) => tool.server === 'beta' && tool.name.includes('tool_1')) }),
    );
  });
});
