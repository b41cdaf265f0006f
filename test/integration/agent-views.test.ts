import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { deferred } from '../../src/util/deferred.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { nextEvent, openEvents, received } from '../helpers/events.js';
import { addAgentKey, sharedTwoRichUpstreams, startTwoRichServers } from '../helpers/agents.js';
import { sharedByTests } from '../helpers/shared.js';

/**
 * Issue #22 item 3: an agent sees only its view on every list (REST, `/mcp` in both eras, the
 * event feed), and what lies outside it answers exactly like an unknown name, audited `denied`.
 * Two real rich fixtures (tools, prompts, resources and templates each), two agents:
 * - `alpha`: server `alpha` only, tools `mcp_alpha_*` except `mcp_alpha_ask_*`;
 * - `reader`: both servers, access `read` (only tools with `readOnlyHint: true`).
 */

interface Listed {
  name: string;
  server: string;
  annotations?: { readOnlyHint?: boolean };
}
type Era = 'legacy' | { pin: string };
const ERAS: Era[] = ['legacy', { pin: '2026-07-28' }];

async function as<T = unknown>(d: TestDaemon, key: string, path: string, init: RequestInit = {}): Promise<{ status: number; body: T; headers: Headers }> {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${key}`);
  if (init.body !== undefined) headers.set('content-type', 'application/json');
  const res = await fetch(d.url + path, { ...init, headers });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T, headers: res.headers };
}

/** Views are what these tests are about, not stdio: the rich servers are HTTP fixtures shared by the file, a session per daemon. */
const upstreams = sharedTwoRichUpstreams();

async function setUp(lifetime: 'test' | 'manual' = 'test'): Promise<{ d: TestDaemon; alpha: string; reader: string }> {
  const d = await startTwoRichServers(lifetime, {}, { upstreams: await upstreams() });
  const add = (body: Record<string, unknown>): Promise<string> => addAgentKey(d, body);
  const alpha = await add({ name: 'alpha', servers: ['alpha'], tools: ['mcp_alpha_*'], exclude: ['mcp_alpha_ask_*'] });
  const reader = await add({ name: 'reader', servers: ['alpha', 'beta'], access: 'read' });
  return { d, alpha, reader };
}

/** What each agent should see, from the operator's full lists. */
const sees = {
  alpha: (tool: Listed): boolean => tool.server === 'alpha' && !tool.name.startsWith('mcp_alpha_ask_'),
  reader: (tool: Listed): boolean => tool.annotations?.readOnlyHint === true,
};
const alphaServer = (item: { server: string }): boolean => item.server === 'alpha';
const anyServer = (): boolean => true;

async function connect(d: TestDaemon, key: string, mode: Era): Promise<Client> {
  const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', d.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  onTestFinished(() => client.close());
  return client;
}

const names = (items: Array<{ name: string }>): string[] => items.map((item) => item.name).sort();
const uris = (items: Array<{ uri?: string; uriTemplate?: string }>): string[] => items.map((item) => item.uri ?? item.uriTemplate ?? '').sort();

/** The set-up of the tests that only list through it (views, ETags). */
const sharedSetUp = sharedByTests(
  () => setUp('manual'),
  ({ d }) => d.close(),
);

describe('agent views', () => {
  it('each agent sees exactly its view on every list: REST and /mcp in both eras', async () => {
    const { d, alpha, reader } = await sharedSetUp();
    const tools = (await d.json<{ tools: Listed[] }>('/tools')).body.tools;
    const prompts = (await d.json<{ prompts: Listed[] }>('/prompts')).body.prompts;
    const resources = (await d.json<{ resources: Array<Listed & { uri: string }>; resourceTemplates: Array<Listed & { uriTemplate: string }> }>('/resources')).body;
    expect(new Set(tools.map((t) => t.server))).toEqual(new Set(['alpha', 'beta']));
    expect(resources.resourceTemplates.length).toBeGreaterThan(0);

    for (const [key, toolFilter, serverFilter] of [
      [alpha, sees.alpha, alphaServer],
      [reader, sees.reader, anyServer],
    ] as const) {
      const want = {
        tools: names(tools.filter(toolFilter)),
        prompts: names(prompts.filter(serverFilter)),
        resources: uris(resources.resources.filter(serverFilter)),
        templates: uris(resources.resourceTemplates.filter(serverFilter)),
      };
      expect(want.tools.length).toBeGreaterThan(0);
      expect(want.tools.length).toBeLessThan(tools.length);

      expect(names((await as<{ tools: Listed[] }>(d, key, '/tools')).body.tools)).toEqual(want.tools);
      const queried = (await d.json<{ tools: Listed[] }>('/tools?q=a&server=alpha')).body.tools;
      expect(names((await as<{ tools: Listed[] }>(d, key, '/tools?q=a&server=alpha')).body.tools)).toEqual(names(queried.filter(toolFilter)));
      expect(names((await as<{ prompts: Listed[] }>(d, key, '/prompts')).body.prompts)).toEqual(want.prompts);
      const rest = (await as<typeof resources>(d, key, '/resources')).body;
      expect([uris(rest.resources), uris(rest.resourceTemplates)]).toEqual([want.resources, want.templates]);

      for (const era of ERAS) {
        const client = await connect(d, key, era);
        expect(names((await client.listTools()).tools), JSON.stringify(era)).toEqual(want.tools);
        expect(names((await client.listPrompts()).prompts), JSON.stringify(era)).toEqual(want.prompts);
        expect(uris((await client.listResources()).resources), JSON.stringify(era)).toEqual(want.resources);
        expect(uris((await client.listResourceTemplates()).resourceTemplates), JSON.stringify(era)).toEqual(want.templates);
      }
    }
  });

  it('GET /tools has an ETag per view, and never answers 304 across views', async () => {
    const { d, alpha, reader } = await sharedSetUp();
    const a = await as(d, alpha, '/tools');
    const r = await as(d, reader, '/tools');
    const operator = await d.json('/tools');
    const tags = [a.headers.get('etag'), r.headers.get('etag'), operator.headers.get('etag')];
    expect(new Set(tags).size).toBe(3);

    expect((await as(d, alpha, '/tools', { headers: { 'if-none-match': tags[0] as string } })).status).toBe(304);
    const crossed = await as<{ tools: Listed[] }>(d, alpha, '/tools', { headers: { 'if-none-match': `${tags[1]}, ${tags[2]}` } });
    expect(crossed.status).toBe(200);
    expect(crossed.body).toEqual(a.body);
    expect((await as(d, reader, '/tools', { headers: { 'if-none-match': tags[0] as string } })).status).toBe(200);
    expect((await d.fetch('/tools', { headers: { 'if-none-match': tags[0] as string } })).status).toBe(200);
  });

  it('a revoked agent added again with another scope sees the new view at once', async () => {
    const { d, alpha } = await setUp();
    const before = (await as<{ tools: Listed[] }>(d, alpha, '/tools')).body.tools;
    expect(new Set(before.map((t) => t.server))).toEqual(new Set(['alpha']));
    expect((await d.json('/agents/alpha', { method: 'DELETE' })).status).toBe(200);
    const again = await addAgentKey(d, { name: 'alpha', servers: ['beta'] });
    const after = (await as<{ tools: Listed[] }>(d, again, '/tools')).body.tools;
    expect(new Set(after.map((t) => t.server))).toEqual(new Set(['beta']));
  });

  it('outside its view, a call answers exactly as an unknown name, and is audited as denied', async () => {
    const { d, alpha, reader } = await setUp();
    const post = (key: string, path: string, body: unknown = {}) => as(d, key, path, { method: 'POST', body: JSON.stringify(body) });
    // Suggestions (nearest visible names, issue #25) follow the name typed, so they differ between
    // two unknown names; they are compared apart: never the hidden tool.
    const unknownName = (body: unknown, name: string): string => {
      const { error } = body as { error?: { suggestions?: string[] } };
      expect(error?.suggestions ?? []).not.toContain(name);
      return JSON.stringify(body, (key, value: unknown) => (key === 'suggestions' ? undefined : value)).replaceAll(name, '<name>');
    };

    // alpha: another server's tool, an excluded tool; reader: a tool without readOnlyHint.
    for (const [key, hidden] of [
      [alpha, 'mcp_beta_structured'],
      [alpha, 'mcp_alpha_ask_roots'],
      [reader, 'mcp_alpha_progress'],
    ] as const) {
      const refused = await post(key, `/tools/${hidden}/call`, { arguments: {} });
      const unknown = await post(key, '/tools/mcp_alpha_nosuch/call', { arguments: {} });
      expect(refused.status).toBe(404);
      expect(unknownName(refused.body, hidden)).toBe(unknownName(unknown.body, 'mcp_alpha_nosuch'));
      const shown = await as(d, key, `/tools/${hidden}`);
      const notShown = await as(d, key, '/tools/mcp_alpha_nosuch');
      expect([shown.status, unknownName(shown.body, hidden)]).toEqual([notShown.status, unknownName(notShown.body, 'mcp_alpha_nosuch')]);
      for (const era of ERAS) {
        const client = await connect(d, key, era);
        const viaMcp = (await client.callTool({ name: hidden, arguments: {} }).catch((err: unknown) => err)) as ProtocolError;
        const unknownMcp = (await client.callTool({ name: 'mcp_alpha_nosuch', arguments: {} }).catch((err: unknown) => err)) as ProtocolError;
        expect(viaMcp).toBeInstanceOf(ProtocolError);
        // `data.suggestions` (issue #36 item 6) follow the name typed, as on REST: compared apart, never the hidden tool.
        const mcpAnswer = (err: ProtocolError, name: string) => [err.code, unknownName({ error: err.data }, name), err.message.replaceAll(name, '<name>')];
        expect(mcpAnswer(viaMcp, hidden)).toEqual(mcpAnswer(unknownMcp, 'mcp_alpha_nosuch'));
      }
    }
    // In view, the same agents' calls go through.
    expect((await post(reader, '/tools/mcp_beta_structured/call', { arguments: {} })).status).toBe(200);
    expect((await post(alpha, '/tools/mcp_alpha_structured/call', { arguments: {} })).status).toBe(200);

    // Prompts and resources of a server outside the scope: unknown, on REST and /mcp.
    const prompt = await post(alpha, '/prompts/mcp_beta_plain/get');
    const noPrompt = await post(alpha, '/prompts/mcp_alpha_nosuch/get');
    expect(unknownName(prompt.body, 'mcp_beta_plain')).toBe(unknownName(noPrompt.body, 'mcp_alpha_nosuch'));
    const read = await as(d, alpha, `/resources/read?uri=${encodeURIComponent('beta://static/hello')}`);
    const noRead = await as(d, alpha, `/resources/read?uri=${encodeURIComponent('beta://static/nosuch')}`);
    expect([read.status, unknownName(read.body, 'beta://static/hello')]).toEqual([noRead.status, unknownName(noRead.body, 'beta://static/nosuch')]);
    expect((await as(d, alpha, `/resources/read?uri=${encodeURIComponent('alpha://static/hello')}`)).status).toBe(200);
    const legacy = await connect(d, alpha, 'legacy');
    // Each pair: outside the view, and a name nobody has; the answers must not tell them apart.
    for (const [hidden, unknown, shown, absent] of [
      [() => legacy.readResource({ uri: 'beta://static/hello' }), () => legacy.readResource({ uri: 'beta://static/nosuch' }), 'beta://static/hello', 'beta://static/nosuch'],
      [
        () => legacy.subscribeResource({ uri: 'beta://static/hello' }),
        () => legacy.subscribeResource({ uri: 'beta://static/nosuch' }),
        'beta://static/hello',
        'beta://static/nosuch',
      ],
      [() => legacy.getPrompt({ name: 'mcp_beta_plain' }), () => legacy.getPrompt({ name: 'mcp_alpha_nosuch' }), 'mcp_beta_plain', 'mcp_alpha_nosuch'],
      [
        () => legacy.complete({ ref: { type: 'ref/prompt', name: 'mcp_beta_greet' }, argument: { name: 'name', value: 'a' } }),
        () => legacy.complete({ ref: { type: 'ref/prompt', name: 'mcp_alpha_nosuch' }, argument: { name: 'name', value: 'a' } }),
        'mcp_beta_greet',
        'mcp_alpha_nosuch',
      ],
    ] as const) {
      const err = (await hidden().catch((e: unknown) => e)) as ProtocolError;
      const none = (await unknown().catch((e: unknown) => e)) as ProtocolError;
      expect(err).toBeInstanceOf(ProtocolError);
      expect(JSON.stringify([err.code, err.data, err.message]).replaceAll(shown, '<name>')).toBe(JSON.stringify([none.code, none.data, none.message]).replaceAll(absent, '<name>'));
    }

    const denied = (await d.json<{ entries: Array<{ agent: string; name: string; outcome: string; code?: string }> }>('/audit?outcome=denied')).body.entries;
    expect(denied.filter((row) => row.agent === 'reader').map((row) => row.name)).toContain('mcp_alpha_progress');
    expect(new Set(denied.filter((row) => row.agent === 'alpha').map((row) => row.name))).toEqual(
      new Set(['mcp_beta_structured', 'mcp_alpha_ask_roots', 'mcp_beta_plain', 'beta://static/hello']),
    );
    expect(denied.find((row) => row.name === 'mcp_beta_structured')?.code).toBe('TOOL_NOT_FOUND');
    const unknownRows = (await d.json<{ entries: Array<{ name: string; outcome: string }> }>('/audit?agent=alpha&tool=mcp_alpha_nosuch')).body.entries;
    expect(unknownRows.map((row) => row.outcome)).not.toContain('denied');
  });

  it("an agent's feed carries only events about servers in its scope, live and replayed", async () => {
    const { d, alpha } = await setUp();
    const feed = await openEvents(d.url, { token: alpha });
    const hello = await nextEvent(feed, 'hello');
    expect((hello as { servers: Array<{ name: string }> }).servers.map((s) => s.name)).toEqual(['alpha']);

    // Out of scope first, then in scope: the feed is in order, so the first has passed by the time the second arrives.
    expect((await d.json('/servers/beta/reload', { method: 'POST' })).status).toBe(200);
    expect((await d.json('/servers/alpha/reload', { method: 'POST' })).status).toBe(200);
    const inScope = await nextEvent(feed, 'server.status');
    expect((inScope as { server: string }).server).toBe('alpha');
    await d.json('/tools/mcp_beta_structured/call', { method: 'POST', body: { arguments: {} } });
    await as(d, alpha, '/tools/mcp_alpha_structured/call', { method: 'POST', body: JSON.stringify({ arguments: {} }) });
    const own = await nextEvent(feed, 'call.finished');
    expect(own).toMatchObject({ agent: 'alpha', name: 'mcp_alpha_structured' });
    const servers = (events: readonly unknown[]) => events.map((e) => (e as { server?: string }).server).filter((s) => s !== undefined);
    expect(new Set(servers(received(feed)))).toEqual(new Set(['alpha']));

    const replay = await openEvents(d.url, { token: alpha, query: 'since=0' });
    await nextEvent(replay, 'call.finished');
    expect(new Set(servers(received(replay)))).toEqual(new Set(['alpha']));
  });

  it('list_changed reaches a 2025-era session only when its view changed', async () => {
    const { d, alpha, reader } = await setUp();
    const sessions = await Promise.all(
      [alpha, reader].map(async (key) => {
        const streamOpen = deferred();
        const transport = new StreamableHTTPClientTransport(new URL('/mcp', d.url), {
          requestInit: { headers: { authorization: `Bearer ${key}` } },
          fetch: async (url, init) => {
            const res = await fetch(url, init);
            if (init?.method === 'GET' && res.ok) streamOpen.resolve();
            return res;
          },
        });
        const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
        await client.connect(transport);
        onTestFinished(() => client.close());
        const seen: number[] = [];
        let next = deferred();
        client.setNotificationHandler('notifications/prompts/list_changed', () => {
          seen.push(Date.now());
          next.resolve();
          next = deferred();
        });
        await streamOpen.promise;
        await client.listPrompts();
        return { client, seen, changed: () => next.promise };
      }),
    );
    const [a, r] = sessions as [(typeof sessions)[0], (typeof sessions)[0]];
    const addPrompt = (server: string, name: string) => d.json(`/tools/mcp_${server}_add_prompt/call`, { method: 'POST', body: { arguments: { name } } });

    // A beta prompt: only the reader's view changed.
    const readerHeard = r.changed();
    await addPrompt('beta', 'fresh_beta');
    await readerHeard;
    // An alpha prompt: both views changed; alpha's session hears this one as its first.
    const alphaHeard = a.changed();
    const readerAgain = r.changed();
    await addPrompt('alpha', 'fresh_alpha');
    await Promise.all([alphaHeard, readerAgain]);
    expect([a.seen.length, r.seen.length]).toEqual([1, 2]);
    expect(names((await a.client.listPrompts()).prompts)).toContain('mcp_alpha_fresh_alpha');
    expect(names((await a.client.listPrompts()).prompts)).not.toContain('mcp_beta_fresh_beta');
  });
});
