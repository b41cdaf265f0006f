import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, ProtocolError, StreamableHTTPClientTransport, type CallToolResult, type Progress, type StandardSchemaV1 } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { DaemonConfigInput } from '../../src/config/schema.js';
import type { ServerConfig } from '../../src/config/types.js';
import { deferred, type Deferred } from '../../src/util/deferred.js';
import { textOf } from '../helpers/connect.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig, startFixtureHttp, type FixtureHttp } from '../helpers/fixtures.js';
import { metricValue } from '../helpers/metrics.js';
import { sharedByTests, sharedWithCleanup } from '../helpers/shared.js';
import { tempDir, waitForFile } from '../helpers/process.js';

/**
 * Issue #23 item 3: the `/mcp` catalogue modes (SPEC §13), against a real daemon, real fixture
 * servers and real SDK clients of both eras. `search` lists `search_tools`, `describe_tools`,
 * `call_tool` and the pinned tools; `auto` is `full` up to `searchAbove` tools in the caller's
 * view; `call_tool` is a direct call under another name.
 */

type Era = 'legacy' | { pin: string };
const ERAS: Array<[string, Era]> = [
  ['2025-11-25', 'legacy'],
  ['2026-07-28', { pin: '2026-07-28' }],
];
const META = ['call_tool', 'describe_tools', 'search_tools'];
const TOKEN = 'operator-secret-token-0123456789';

interface Connected {
  client: Client;
  changed: { next: Deferred<void> };
}

async function connect(d: TestDaemon, era: Era, options: { key?: string; elicitation?: string } = {}): Promise<Connected> {
  const client = new Client(
    { name: 'modes', version: '1.0.0' },
    { versionNegotiation: { mode: era }, capabilities: options.elicitation !== undefined ? { elicitation: { form: {} } } : {} },
  );
  if (options.elicitation !== undefined) {
    const answer = options.elicitation;
    client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { answer } }));
  }
  const changed = { next: deferred<void>() };
  client.setNotificationHandler('notifications/tools/list_changed', () => changed.next.resolve());
  const key = options.key ?? (d.config.token !== undefined ? d.config.token : undefined);
  const requestInit = key !== undefined ? { headers: { authorization: `Bearer ${key}` } } : undefined;
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', d.url), requestInit ? { requestInit } : {}));
  onTestFinished(() => client.close());
  if (era !== 'legacy') {
    const subscription = await client.listen({ toolsListChanged: true });
    onTestFinished(() => subscription.close());
  }
  return { client, changed };
}

const names = async (client: Client): Promise<string[]> => (await client.listTools()).tools.map((tool) => tool.name).sort();
/**
 * The echo tools for every daemon of the file: one `echo-http` server (a session per daemon)
 * instead of an `echo-stdio` process per daemon. Registered first, so closed after the daemons.
 */
const echoHttp = sharedByTests(
  () => startFixtureHttp('echo-http'),
  (http) => http.close(),
);
const echoServer = async (): Promise<ServerConfig> => ({ type: 'http', url: (await echoHttp()).url });
/**
 * A server whose `add_tool` {name} adds a tool (answering its own name when called, described
 * "Added at runtime.") and announces the change: the raw `many-tools` fixture, which starts without
 * the SDK. Four tools to begin with: `add_tool`, `echo`, `tool_2`, `tool_3`.
 */
const listChanged = (): ServerConfig => fixtureServerConfig('many-tools', { env: { TOOLS: '4' } });
const LC_TOOLS = ['mcp_lc_add_tool', 'mcp_lc_echo', 'mcp_lc_tool_2', 'mcp_lc_tool_3'];
const echo = async (config: Partial<DaemonConfigInput> = {}, servers?: Record<string, ServerConfig>) => startDaemon({ servers: servers ?? { echo: await echoServer() }, config });
/** The echo daemon in each mode, shared by the tests that only list, search and call through it. */
const sharedEcho = (config: Partial<DaemonConfigInput>) =>
  sharedByTests(
    async () => startDaemon({ servers: { echo: await echoServer() }, config, lifetime: 'manual' }),
    (d) => d.close(),
  );
const fullEcho = sharedEcho({ catalogue: 'full' });
const searchEcho = sharedEcho({ catalogue: 'search' });
const pinnedSearchEcho = sharedEcho({ catalogue: 'search', pinned: ['mcp_echo_rev*'] });
/** The slow fixture behind a search-mode daemon, for both eras' cancel tests (each clears the marker first). */
const slowSearch = sharedWithCleanup(async (cleanup) => {
  const marker = join(await tempDir(cleanup), 'cancelled');
  const d = await startDaemon({ servers: { slow: fixtureServerConfig('slow-tool', { env: { CANCEL_MARKER: marker } }) }, config: { catalogue: 'search' }, lifetime: 'manual' });
  cleanup(() => d.close());
  return { d, marker };
});
/** The rich fixture of each era behind a search-mode daemon, shared by the tests that call through it. */
const sharedRich = (upstream: 'legacy' | 'modern') =>
  sharedByTests(
    async () => {
      let rich: ServerConfig = fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy' } });
      let http: FixtureHttp | undefined;
      if (upstream === 'modern') {
        // A 2026-07-28 server answers input_required itself: its state comes back sealed to the named tool.
        http = await startFixtureHttp('rich-http', { env: { ERA: 'modern' } });
        rich = { type: 'http', url: http.url };
      }
      const d = await startDaemon({ servers: { rich }, config: { catalogue: 'search' }, lifetime: 'manual' }).catch(async (err: unknown) => {
        await http?.close();
        throw err;
      });
      return { d, http };
    },
    async ({ d, http }) => {
      await d.close();
      await http?.close();
    },
  );
const richDaemons = { legacy: sharedRich('legacy'), modern: sharedRich('modern') };
const CALLS_OK = 'switchboard_tool_calls_total{transport="mcp",server="echo",tool="mcp_echo_add",outcome="ok"}';
const outcome = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    (value) => ({ value }),
    (err: unknown) => (ProtocolError.isInstance(err) ? { code: err.code, message: err.message, data: err.data } : { thrown: String(err) }),
  );

describe.each(ERAS)('catalogue modes, a %s client', (_era, era) => {
  it('full lists the catalogue; search lists the meta-tools and the pinned tools, and still calls a tool by its own name', async () => {
    const full = await fullEcho();
    expect(await names((await connect(full, era)).client)).toEqual(['mcp_echo_add', 'mcp_echo_echo', 'mcp_echo_reverse']);

    const d = await pinnedSearchEcho();
    const { client } = await connect(d, era);
    const listed = (await client.listTools()).tools;
    expect(listed.map((tool) => tool.name).sort()).toEqual([...META, 'mcp_echo_reverse'].sort());
    for (const tool of listed.filter((t) => META.includes(t.name))) expect(tool.description?.length).toBeGreaterThan(60);
    expect(textOf(await client.callTool({ name: 'mcp_echo_echo', arguments: { text: 'by name' } }))).toBe('by name');
  });

  it('search_tools answers the best matches with their full definitions; describe_tools names the unknown ones', async () => {
    const full = await fullEcho();
    const definitions = (await (await connect(full, era)).client.listTools()).tools;
    const d = await searchEcho();
    const { client } = await connect(d, era);

    const found = (await client.callTool({ name: 'search_tools', arguments: { query: 'reverse text', limit: 2 } })) as CallToolResult;
    const tools = (found.structuredContent as { tools: Array<{ name: string }> }).tools;
    expect(tools[0]?.name).toBe('mcp_echo_reverse');
    expect(tools.length).toBeLessThanOrEqual(2);
    const definitionOf = (name: string) => ({ ...definitions.find((tool) => tool.name === name), _meta: expect.anything() });
    expect(tools[0]).toEqual(definitionOf('mcp_echo_reverse'));
    expect(JSON.parse(textOf(found))).toEqual(found.structuredContent);
    // The neighbourhood map (issue #37): the server's other tools, by name, none a match again.
    const one = (await client.callTool({ name: 'search_tools', arguments: { query: 'reverse text', limit: 1 } })).structuredContent as {
      tools: Array<{ name: string }>;
      related: Array<{ server: string; tools: Array<{ name: string }>; names: string[]; more: number }>;
    };
    expect(one.tools.map((tool) => tool.name)).toEqual(['mcp_echo_reverse']);
    expect(one.related.map((group) => group.server)).toEqual(['echo']);
    expect(one.related.flatMap((group) => [...group.tools.map((tool) => tool.name), ...group.names]).sort()).toEqual(['mcp_echo_add', 'mcp_echo_echo']);
    expect(one.related[0]?.more).toBe(0);

    const described = (await client.callTool({ name: 'describe_tools', arguments: { names: ['mcp_echo_add', 'nope'] } })) as CallToolResult;
    expect(described.isError).toBeFalsy();
    expect(described.structuredContent).toEqual({
      tools: [definitionOf('mcp_echo_add')],
      unknown: [{ name: 'nope', code: 'TOOL_NOT_FOUND', message: 'No tool named "nope"' }],
    });
  });

  it('refuses bad search input with a clear tool error, never a crash', async () => {
    const d = await searchEcho();
    const { client } = await connect(d, era);
    for (const [args, wording] of [
      [{ query: '' }, /query must not be empty/],
      [{ query: '   ' }, /query must not be empty/],
      [{ query: 'x'.repeat(501) }, /at most 500 characters/],
      [{ query: 'echo', limit: 0 }, /limit must be between 1 and 50/],
      [{ query: 'echo', limit: 51 }, /limit must be between 1 and 50/],
      [{}, /query must be a string/],
    ] as const) {
      const result = (await client.callTool({ name: 'search_tools', arguments: args })) as CallToolResult;
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(result)).toMatch(wording);
      expect(result._meta).toMatchObject({ 'switchboard/error': { code: 'VALIDATION_FAILED' } });
    }
    const described = (await client.callTool({ name: 'describe_tools', arguments: { names: [] } })) as CallToolResult;
    expect(described.isError).toBe(true);
    // The daemon still answers.
    expect(textOf(await client.callTool({ name: 'call_tool', arguments: { name: 'mcp_echo_echo', arguments: { text: 'alive' } } }))).toBe('alive');
  });

  it('call_tool is a direct call: result, structuredContent, an error result, an unknown name, invalid arguments', async () => {
    const d = await searchEcho();
    const okBefore = await metricValue(d, CALLS_OK);
    const { client } = await connect(d, era);
    const via = (name: string, args: Record<string, unknown>) => client.callTool({ name: 'call_tool', arguments: { name, arguments: args } });
    const direct = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });

    expect(await via('mcp_echo_add', { a: 2, b: 3 })).toEqual(await direct('mcp_echo_add', { a: 2, b: 3 }));
    expect(await via('mcp_echo_add', { a: 2, b: 3 })).toMatchObject({ structuredContent: { sum: 5 } });
    const invalid = await via('mcp_echo_add', { a: 'two' });
    expect(invalid).toMatchObject({ isError: true });
    expect(invalid).toEqual(await direct('mcp_echo_add', { a: 'two' }));
    const unknown = await outcome(via('mcp_nope', {}));
    expect(unknown).toMatchObject({ code: -32602, data: { code: 'TOOL_NOT_FOUND' } });
    expect(unknown).toEqual(await outcome(direct('mcp_nope', {})));
    // A malformed call_tool is refused as a malformed tools/call is: InvalidParams.
    expect(await outcome(client.callTool({ name: 'call_tool', arguments: { arguments: {} } }))).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/name must be a string/),
    });
    expect(await outcome(client.callTool({ name: 'call_tool', arguments: { name: 'mcp_echo_echo', arguments: 'text' } }))).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/arguments must be an object/),
    });
    // The daemon is shared: the three ok calls this test made, whatever ran before it.
    expect((await metricValue(d, CALLS_OK)) - okBefore).toBe(3);
  });

  it.each(['legacy', 'modern'] as const)('call_tool relays progress and the server\u2019s questions as a direct call does (%s upstream)', async (upstream) => {
    const { d } = await richDaemons[upstream]();
    const { client } = await connect(d, era, { elicitation: 'Ada' });
    const progressOf = async (name: string, args: Record<string, unknown>) => {
      const seen: Progress[] = [];
      const result = await client.callTool({ name, arguments: args }, { onprogress: (progress) => seen.push(progress) });
      return { result, seen: seen.map((p) => [p.progress, p.total, p.message]) };
    };
    const direct = await progressOf('mcp_rich_progress', { steps: 3 });
    expect(direct.seen).toHaveLength(3);
    expect(await progressOf('call_tool', { name: 'mcp_rich_progress', arguments: { steps: 3 } })).toEqual(direct);

    const asked = await client.callTool({ name: 'call_tool', arguments: { name: 'mcp_rich_ask_elicitation', arguments: { message: 'Name?' } } });
    expect(textOf(asked)).toBe('elicited: accept Ada');
    expect(asked).toEqual(await client.callTool({ name: 'mcp_rich_ask_elicitation', arguments: { message: 'Name?' } }));
  });

  it('call_tool is cancelled upstream when the client cancels, as a direct call is', async () => {
    const { d, marker } = await slowSearch();
    // The other era's test ran through the same server: this one reads a fresh marker.
    await rm(marker, { force: true });
    const { client } = await connect(d, era);
    const abort = new AbortController();
    const running = deferred<void>();
    const call = client.callTool(
      { name: 'call_tool', arguments: { name: 'mcp_slow_slow', arguments: { durationMs: 60_000, progressEveryMs: 20 } } },
      { signal: abort.signal, onprogress: () => running.resolve() },
    );
    const settled = call.then(
      () => 'resolved',
      () => 'rejected',
    );
    // The first progress proves the upstream handler is running.
    await running.promise;
    abort.abort(new Error('user gave up'));
    expect(await settled).toBe('rejected');
    // The fixture writes the marker when it receives notifications/cancelled.
    expect(await waitForFile(marker, AbortSignal.timeout(10_000))).not.toBe('');
  });

  it('auto crosses searchAbove at runtime for an agent\u2019s view: list_changed, then the meta-tools', async () => {
    const d = await startDaemon({ servers: { lc: listChanged(), echo: await echoServer() }, config: { token: TOKEN, searchAbove: 4 } });
    const added = await d.json<{ key: string }>('/agents', { method: 'POST', body: { name: 'lc-only', servers: ['lc'] } });
    expect(added.status).toBe(201);
    const { client, changed } = await connect(d, era, { key: added.body.key });
    // Seven tools in all, four in its view: full.
    expect(await names(client)).toEqual(LC_TOOLS);
    await client.callTool({ name: 'mcp_lc_add_tool', arguments: { name: 'fifth' } });
    await changed.next.promise;
    expect(await names(client)).toEqual(META);
  });

  it('auto crosses searchAbove at runtime: list_changed, then the meta-tools', async () => {
    const d = await echo({ searchAbove: 4 }, { lc: listChanged() });
    const { client, changed } = await connect(d, era);
    expect(await names(client)).toEqual(LC_TOOLS);
    await client.callTool({ name: 'mcp_lc_add_tool', arguments: { name: 'fifth' } });
    await changed.next.promise;
    expect(await names(client)).toEqual(META);
    // The new tool is found, and called by its own name.
    const found = (await client.callTool({ name: 'search_tools', arguments: { query: 'fifth' } })) as CallToolResult;
    expect((found.structuredContent as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toEqual(['mcp_lc_fifth']);
    expect(textOf(await client.callTool({ name: 'mcp_lc_fifth', arguments: {} }))).toBe('fifth');
  });
});

describe('catalogue modes per agent', () => {
  /** One daemon per config, shared by both eras' tests: each adds its own agents, named after its era. */
  const agentDaemon = (config: Partial<DaemonConfigInput>) =>
    sharedByTests(
      async () => startDaemon({ servers: { echo: await echoServer() }, config: { token: TOKEN, ...config }, lifetime: 'manual' }),
      (d) => d.close(),
    );
  const pinnedFull = agentDaemon({ catalogue: 'full', pinned: ['mcp_echo_add'] });
  const autoAboveTwo = agentDaemon({ searchAbove: 2 });
  async function withAgents(shared: () => Promise<TestDaemon>, era: string): Promise<{ d: TestDaemon; add: (body: Record<string, unknown>) => Promise<string> }> {
    const d = await shared();
    const add = async (body: Record<string, unknown>): Promise<string> => {
      const res = await d.json<{ key: string }>('/agents', { method: 'POST', body: { ...body, name: `${String(body.name)}-${era}` } });
      expect(res.status).toBe(201);
      return res.body.key;
    };
    return { d, add };
  }

  it.each(ERAS)('an agent\u2019s catalogue and pinned win over the daemon\u2019s (%s)', async (label, era) => {
    const { d, add } = await withAgents(pinnedFull, label);
    const searcher = await add({ name: 'searcher', catalogue: 'search', pinned: ['mcp_echo_echo'] });
    const plain = await add({ name: 'plain', catalogue: 'search' });
    const inherits = await add({ name: 'inherits' });
    expect(await names((await connect(d, era)).client)).toEqual(['mcp_echo_add', 'mcp_echo_echo', 'mcp_echo_reverse']);
    expect(await names((await connect(d, era, { key: searcher })).client)).toEqual([...META, 'mcp_echo_echo'].sort());
    expect(await names((await connect(d, era, { key: plain })).client)).toEqual(['mcp_echo_add', ...META].sort());
    expect(await names((await connect(d, era, { key: inherits })).client)).toEqual(['mcp_echo_add', 'mcp_echo_echo', 'mcp_echo_reverse']);
  });

  it.each(ERAS)('auto counts the agent\u2019s own view; search finds only what it may see (%s)', async (label, era) => {
    const { d, add } = await withAgents(autoAboveTwo, label);
    const small = await add({ name: 'small', tools: ['mcp_echo_echo', 'mcp_echo_add'] });
    const reader = await add({ name: 'reader', access: 'read', catalogue: 'search' });
    const full = await add({ name: 'full', catalogue: 'full' });
    // The operator sees three tools: above 2, so search.
    expect(await names((await connect(d, era)).client)).toEqual(META);
    expect(await names((await connect(d, era, { key: small })).client)).toEqual(['mcp_echo_add', 'mcp_echo_echo']);
    expect(await names((await connect(d, era, { key: full })).client)).toEqual(['mcp_echo_add', 'mcp_echo_echo', 'mcp_echo_reverse']);

    const { client } = await connect(d, era, { key: reader });
    const found = (await client.callTool({ name: 'search_tools', arguments: { query: 'text echo add reverse' } })) as CallToolResult;
    expect((found.structuredContent as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toEqual(['mcp_echo_reverse']);
    // Outside the view, call_tool answers as a direct call of an unknown name does.
    const viaMeta = await outcome(client.callTool({ name: 'call_tool', arguments: { name: 'mcp_echo_add', arguments: { a: 1, b: 1 } } }));
    expect(viaMeta).toMatchObject({ code: -32602, data: { code: 'TOOL_NOT_FOUND' } });
    expect(viaMeta).toEqual(await outcome(client.callTool({ name: 'mcp_echo_add', arguments: { a: 1, b: 1 } })));
  });
});

describe('a catalogue tool named like a meta-tool', () => {
  it.each(ERAS)('is shadowed by the meta-tool in search mode (call_tool still reaches it), and listed as itself in full mode (%s)', async (_era, era) => {
    const servers = { lc: { ...listChanged(), toolPrefix: '' } };
    const full = await echo({ catalogue: 'full' }, servers);
    const { client, changed } = await connect(full, era);
    await client.callTool({ name: 'add_tool', arguments: { name: 'call_tool' } });
    await changed.next.promise;
    expect(await names(client)).toContain('call_tool');
    expect(textOf(await client.callTool({ name: 'call_tool', arguments: {} }))).toBe('call_tool');

    const search = await echo({ catalogue: 'search', pinned: ['*'] }, servers);
    const { client: searchClient, changed: searchChanged } = await connect(search, era);
    await searchClient.callTool({ name: 'add_tool', arguments: { name: 'call_tool' } });
    await searchChanged.next.promise;
    const described = (await searchClient.callTool({ name: 'describe_tools', arguments: { names: ['call_tool'] } })) as CallToolResult;
    expect((described.structuredContent as { tools: Array<{ description: string }> }).tools[0]?.description).toBe('Added at runtime.');
    const listed = (await searchClient.listTools()).tools.filter((tool) => tool.name === 'call_tool');
    expect(listed).toHaveLength(1);
    expect(listed[0]?.description).not.toBe('Added at runtime.');
    expect(textOf(await searchClient.callTool({ name: 'call_tool', arguments: { name: 'call_tool', arguments: {} } }))).toBe('call_tool');
  });
});

describe('a Switchboard aggregating another one', () => {
  it('gets the whole catalogue whatever the mode, never the meta-tools', async () => {
    const inner = await searchEcho();
    expect(await names((await connect(inner, 'legacy')).client)).toEqual(META);
    const outer = await startDaemon({ servers: { inner: { type: 'http', url: `${inner.url}/mcp` } }, config: { catalogue: 'full' } });
    const tools = (await outer.json<{ tools: Array<{ name: string }> }>('/tools')).body.tools.map((t) => t.name);
    expect(tools).toEqual(['mcp_inner_mcp_echo_add', 'mcp_inner_mcp_echo_echo', 'mcp_inner_mcp_echo_reverse']);
  });
});

describe('call_tool and a 2026-07-28 agent\u2019s input_required', () => {
  it('hands the round to the agent as a direct call does, its state sealed to the named tool', async () => {
    const { d } = await richDaemons.modern();
    const { client } = await connect(d, { pin: '2026-07-28' }, { elicitation: 'unused' });
    const Raw: StandardSchemaV1<unknown, Record<string, unknown>> = {
      '~standard': { version: 1, vendor: 't', validate: (value) => ({ value: value as Record<string, unknown> }) },
    };
    const via = (name: string, extra: Record<string, unknown> = {}) =>
      client.request({ method: 'tools/call', params: { name: 'call_tool', arguments: { name, arguments: { message: 'Who?' } }, ...extra } }, Raw, { allowInputRequired: true });
    const first = await via('mcp_rich_ask_elicitation');
    expect(first).toMatchObject({ resultType: 'input_required', inputRequests: { ask: { method: 'elicitation/create', params: { message: 'Who?' } } } });
    const state = String(first.requestState);
    expect(await outcome(via('mcp_rich_ask_roots', { inputResponses: {}, requestState: state }))).toMatchObject({ code: -32602 });
    const done = await via('mcp_rich_ask_elicitation', { inputResponses: { ask: { action: 'accept', content: { answer: 'Lin' } } }, requestState: state });
    expect(done).toMatchObject({ content: [{ type: 'text', text: 'elicited: accept Lin' }] });
  });
});
