import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { buildCatalogue, exposedToolName, MAX_TOOL_NAME_LENGTH, toolErrorResult, type CatalogueEntry } from '../../../../src/upstream/catalogue/tool-bridge.js';
import { exposedName } from '../../../../src/upstream/catalogue/naming.js';

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const schema = { type: 'object' as const };
const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({ name, inputSchema: schema, ...extra });
const entry = (server: string, names: string[], extra: Partial<CatalogueEntry> = {}): CatalogueEntry => ({
  server,
  providerName: 'Test',
  tools: names.map((name) => tool(name)),
  deferred: false,
  ...extra,
});

/** Small seeded PRNG (mulberry32) so the "random" cases are the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('exposedToolName', () => {
  it('joins server and tool under mcp_, keeping letters, digits, _ and -', () => {
    expect(exposedToolName('github', 'create_issue')).toBe('mcp_github_create_issue');
    expect(exposedToolName('my-server', 'Get-Item2')).toBe('mcp_my-server_Get-Item2');
  });

  it('turns other characters into _ and collapses runs of _', () => {
    expect(exposedToolName('my.server', 'get/user name')).toBe('mcp_my_server_get_user_name');
    expect(exposedToolName('a__b', '__x...y__')).toBe('mcp_a_b_x_y_');
    expect(exposedToolName('café', 'naïve 🚀 go')).toBe('mcp_caf_na_ve_go');
    expect(exposedToolName('', '')).toBe('mcp_');
  });

  it('keeps a name of exactly 64 characters as it is', () => {
    const name = exposedToolName('s', 'x'.repeat(64 - 'mcp_s_'.length));
    expect(name).toHaveLength(64);
    expect(name.endsWith('x')).toBe(true);
  });

  it('cuts longer names to 64 with a stable hash of the unsanitised pair', () => {
    const server = 'analytics-warehouse';
    const toolName = 'run_a_very_long_query_against_the_reporting_replica_with_retries';
    const name = exposedToolName(server, toolName);
    // Pinned: a change here renames tools that agents may have stored.
    expect(name).toBe('mcp_analytics-warehouse_run_a_very_long_query_against_t_c80bca21');
    expect(name).toHaveLength(MAX_TOOL_NAME_LENGTH);
    const hash = createHash('sha256').update(`${server}\u0000${toolName}`).digest('hex').slice(0, 8);
    expect(name.endsWith(`_${hash}`)).toBe(true);
    // Same sanitised text, different raw pair: the hash keeps them apart.
    expect(exposedToolName('analytics.warehouse', toolName)).toBe('mcp_analytics_warehouse_run_a_very_long_query_against_t_f10b29bf');
  });

  it('does not leave a doubled _ where the cut lands on one', () => {
    // Position 55 of the sanitised base falls on an underscore.
    const name = exposedToolName('s', `${'y'.repeat(49)}_${'z'.repeat(20)}`);
    expect(name).toMatch(/^mcp_s_y{49}_[0-9a-f]{8}$/);
  });

  it('always gives a valid name, for any input', () => {
    const random = prng(42);
    const alphabet = ['a', 'Z', '9', '_', '-', '.', ' ', '/', 'é', 'ß', '中', '🚀', '\u0000', '\n', '\u200d', '\ud800'];
    for (let i = 0; i < 3000; i += 1) {
      const text = () => Array.from({ length: Math.floor(random() * 90) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      const server = text();
      const toolName = text();
      const name = exposedToolName(server, toolName);
      expect(name, JSON.stringify([server, toolName])).toMatch(NAME);
      expect(name).not.toMatch(/__/);
      expect(exposedToolName(server, toolName)).toBe(name);
    }
  });
});

describe("exposedName under a prefix of the operator's choosing (toolPrefix)", () => {
  const SEP_986 = /^[A-Za-z0-9_.-]{1,64}$/;

  it('keeps a SEP-986 name exactly as the server wrote it, dots and double underscores included', () => {
    expect(exposedName('', 'github', 'get.file_contents')).toBe('get.file_contents');
    expect(exposedName('', 'github', 'mcp__github__x')).toBe('mcp__github__x');
    expect(exposedName('gh.', 'github', 'list-issues')).toBe('gh.list-issues');
  });

  it('turns only characters SEP-986 does not allow into _, and bounds the length', () => {
    expect(exposedName('', 's', 'get user/name')).toBe('get_user_name');
    expect(exposedName('', 's', 'naïve 🚀 go')).toBe('na_ve_go');
    const long = exposedName('', 's', 'x.'.repeat(50));
    expect(long).toMatch(SEP_986);
    expect(long).toHaveLength(64);
    const random = prng(7);
    const alphabet = ['a', 'Z', '9', '_', '-', '.', ' ', '/', 'é', '🚀', '\n'];
    for (let i = 0; i < 2000; i += 1) {
      const text = () => Array.from({ length: 1 + Math.floor(random() * 90) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      expect(exposedName('', 'srv', text())).toMatch(SEP_986);
    }
  });
});

describe('buildCatalogue', () => {
  it('bridges each tool with its path, defaults and flags, sorted by name', () => {
    const { tools, collisions } = buildCatalogue([
      {
        server: 'zeta',
        providerName: 'Claude Code',
        deferred: true,
        tools: [
          tool('search', {
            title: 'Search',
            description: 'Finds things',
            outputSchema: { type: 'object', properties: { hits: { type: 'number' } } },
            annotations: { readOnlyHint: true },
          }),
          tool('blank', { description: '' }),
        ],
      },
      { server: 'alpha', providerName: 'Cursor', deferred: false, stale: true, tools: [tool('ping', { annotations: { title: 'Ping!' } })] },
    ]);
    expect(collisions).toEqual([]);
    expect(tools).toEqual([
      {
        name: 'mcp_alpha_ping',
        server: 'alpha',
        originalName: 'ping',
        path: 'mcp:alpha via Cursor',
        title: 'Ping!',
        description: 'MCP tool from alpha',
        inputSchema: schema,
        annotations: { title: 'Ping!' },
        deferred: false,
        stale: true,
      },
      {
        name: 'mcp_zeta_blank',
        server: 'zeta',
        originalName: 'blank',
        path: 'mcp:zeta via Claude Code',
        description: 'MCP tool from zeta',
        inputSchema: schema,
        deferred: true,
      },
      {
        name: 'mcp_zeta_search',
        server: 'zeta',
        originalName: 'search',
        path: 'mcp:zeta via Claude Code',
        title: 'Search',
        description: 'Finds things',
        inputSchema: schema,
        outputSchema: { type: 'object', properties: { hits: { type: 'number' } } },
        annotations: { readOnlyHint: true },
        deferred: true,
      },
    ]);
    expect(tools.map((t) => 'stale' in t)).toEqual([true, false, false]);
  });

  it('gives colliding tools distinct names: first by (server, tool) keeps the plain one', () => {
    const { tools, collisions } = buildCatalogue([entry('a_b', ['c']), entry('a', ['b_c', 'b.c']), entry('x', ['y'])]);
    const hash = (server: string, name: string) => createHash('sha256').update(`${server}\u0000${name}`).digest('hex').slice(0, 8);
    expect(collisions).toEqual([
      {
        name: 'mcp_a_b_c',
        tools: [
          { server: 'a', originalName: 'b.c', exposedName: 'mcp_a_b_c' },
          { server: 'a', originalName: 'b_c', exposedName: `mcp_a_b_c_${hash('a', 'b_c')}` },
          { server: 'a_b', originalName: 'c', exposedName: `mcp_a_b_c_${hash('a_b', 'c')}` },
        ],
      },
    ]);
    expect(tools.map((t) => t.name)).toEqual(['mcp_a_b_c', `mcp_a_b_c_${hash('a', 'b_c')}`, `mcp_a_b_c_${hash('a_b', 'c')}`, 'mcp_x_y'].sort());
    expect(tools.find((t) => t.name === 'mcp_a_b_c')?.originalName).toBe('b.c');
  });

  it('resolves collisions the same way whatever the order of servers and tools', () => {
    const random = prng(7);
    const entries = [entry('a_b', ['c', 'd.e', 'long'.repeat(20)]), entry('a', ['b_c', 'b.c', 'b_d_e']), entry('a.b', ['c', 'd_e', 'long'.repeat(20)]), entry('q', ['r'])];
    const reference = buildCatalogue(entries);
    expect(reference.collisions.map((c) => c.name)).toEqual(['mcp_a_b_c', 'mcp_a_b_d_e']);
    for (let i = 0; i < 50; i += 1) {
      const input = shuffled(entries, random).map((e) => ({ ...e, tools: shuffled(e.tools, random) }));
      expect(buildCatalogue(input)).toEqual(reference);
    }
  });

  it('never hands out a taken name, even one a tool already has literally', () => {
    const hash = createHash('sha256').update('a_b\u0000c').digest('hex').slice(0, 8);
    // `a`/`b_c_<hash>` is exactly what the loser `a_b`/`c` would be renamed to.
    const { tools } = buildCatalogue([entry('a_b', ['c']), entry('a', ['b_c', `b_c_${hash}`])]);
    const names = tools.map((t) => t.name);
    expect(new Set(names).size).toBe(3);
    expect(tools.find((t) => t.originalName === `b_c_${hash}`)?.name).toBe(`mcp_a_b_c_${hash}`);
    const loser = tools.find((t) => t.server === 'a_b');
    expect(loser?.name).toMatch(/^mcp_a_b_c_[0-9a-f]{8}$/);
    expect(loser?.name).not.toBe(`mcp_a_b_c_${hash}`);
  });

  it('keeps the first of a tool a server lists twice', () => {
    const { tools, collisions } = buildCatalogue([
      { server: 's', providerName: 'P', deferred: false, tools: [tool('t', { description: 'first' }), tool('t', { description: 'second' })] },
    ]);
    expect(collisions).toEqual([]);
    expect(tools.map((t) => [t.name, t.description])).toEqual([['mcp_s_t', 'first']]);
  });

  it('builds 20 servers × 500 tools with unique, valid names', () => {
    const entries = Array.from({ length: 20 }, (_, s) =>
      entry(
        `server_${s}`,
        Array.from({ length: 500 }, (_, t) => `tool.${t}_${'x'.repeat(t % 70)}`),
      ),
    );
    // Another spelling of the same server name makes every one of its tools collide.
    entries.push(
      entry(
        'server.0',
        entries[0]!.tools.map((t) => t.name),
      ),
    );
    const { tools, collisions } = buildCatalogue(entries);
    expect(tools).toHaveLength(10_500);
    expect(new Set(tools.map((t) => t.name)).size).toBe(10_500);
    expect(tools.filter((t) => !NAME.test(t.name))).toEqual([]);
    // Only the names short enough to escape the cut collide: a cut name's hash covers the raw
    // server name, so `server_0` and `server.0` already differ there.
    const short = entries[0]!.tools.filter((t) => `mcp_server_0_${t.name}`.length <= 64);
    expect(short.length).toBeGreaterThan(100);
    expect(collisions).toHaveLength(short.length);
    expect(tools.every((t, i) => i === 0 || tools[i - 1]!.name < t.name)).toBe(true);
  });
});

describe('toolErrorResult', () => {
  it('wraps a message as an MCP error result carrying its code in _meta', () => {
    expect(toolErrorResult({ code: 'SERVER_CLOSED', message: 'connection closed' })).toEqual({
      content: [{ type: 'text', text: 'MCP error: connection closed' }],
      isError: true,
      _meta: { 'switchboard/error': { code: 'SERVER_CLOSED' } },
    });
  });
});
