import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { systemClock } from '../../src/util/clock.js';
import { recordDaemonEvents, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { closed, nextEvent, openEvents } from '../helpers/events.js';
import { startFixtureHttp } from '../helpers/fixtures.js';
import { sharedByTests } from '../helpers/shared.js';

/**
 * Issue #22 items 1 and 2: agents and their keys against a real daemon over real HTTP, with a
 * real fixture upstream and real SDK clients as agents. The operator key is the config's `token`.
 */

const TOKEN = 'operator-secret-token-0123456789';
const KEY_SHAPE = /^sbk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/;

interface Issued {
  agent: { name: string; status: string };
  key: string;
}

function bearer(key: string | undefined): RequestInit {
  return key === undefined ? {} : { headers: { authorization: `Bearer ${key}` } };
}

/** `fetch` with exactly this key (or none), whatever the daemon's token. */
async function as<T = { error?: { code: string } }>(d: TestDaemon, key: string | undefined, path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const headers = new Headers(init.headers);
  if (key !== undefined) headers.set('authorization', `Bearer ${key}`);
  if (init.body !== undefined) headers.set('content-type', 'application/json');
  const res = await fetch(d.url + path, { ...init, headers });
  const text = await res.text();
  const json = res.headers.get('content-type')?.startsWith('application/json') === true;
  return { status: res.status, body: (json ? JSON.parse(text) : text) as T };
}

async function addAgent(d: TestDaemon, body: Record<string, unknown>): Promise<Issued> {
  const res = await d.json<Issued>('/agents', { method: 'POST', body });
  expect(res.status).toBe(201);
  expect(res.body.key).toMatch(KEY_SHAPE);
  return res.body;
}

/** Keys and views are what these tests are about: both servers are sessions on one echo-http fixture, shared by the file. */
const echoHttp = sharedByTests(
  () => startFixtureHttp('echo-http'),
  (http) => http.close(),
);

async function echoDaemon(options: Parameters<typeof startDaemon>[0] = {}): Promise<TestDaemon> {
  const { url } = await echoHttp();
  return startDaemon({
    servers: { echo: { type: 'http', url }, other: { type: 'http', url } },
    ...options,
    config: { token: TOKEN, ...options.config },
  });
}

describe('operator and agent keys', () => {
  it('the operator key opens every route; an agent key only the agent routes; no key is 401', async () => {
    const d = await echoDaemon();
    const { key } = await addAgent(d, { name: 'reader', servers: ['echo'] });

    const operatorRoutes: Array<[string, string]> = [
      ['GET', '/servers'],
      ['GET', '/servers/echo'],
      ['GET', '/metrics'],
      ['GET', '/agents'],
      ['GET', '/agents/reader'],
      ['POST', '/reload'],
      ['POST', '/servers/other/reload'],
    ];
    for (const [method, path] of operatorRoutes) {
      expect((await as(d, TOKEN, path, { method })).status, `${method} ${path}`).toBe(200);
      const refused = await as(d, key, path, { method });
      expect(refused, `${method} ${path}`).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN' } } });
      expect((await as(d, undefined, path, { method })).body, `${method} ${path}`).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    }

    const agentRoutes: Array<[string, string, unknown?]> = [
      ['GET', '/tools'],
      ['GET', '/tools/mcp_echo_echo'],
      ['POST', '/tools/mcp_echo_echo/call', { arguments: { text: 'hi' } }],
      ['GET', '/prompts'],
      ['GET', '/resources'],
      ['GET', '/status'],
    ];
    for (const [method, path, body] of agentRoutes) {
      const init = { method, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) };
      expect((await as(d, key, path, init)).status, `${method} ${path}`).toBe(200);
      expect((await as(d, TOKEN, path, init)).status, `${method} ${path}`).toBe(200);
      expect((await as(d, undefined, path, init)).status, `${method} ${path}`).toBe(401);
    }
    expect((await as(d, 'sbk_0000000000000000_' + 'A'.repeat(43), '/tools')).body).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    // The feed takes the key as ?token= too (browsers cannot set headers on a WebSocket handshake).
    const feed = await openEvents(d.url, { token: key });
    await new Promise((resolve) => {
      feed.once('close', resolve);
      feed.close();
    });
    await expect(openEvents(d.url)).rejects.toThrow('HTTP 401');
    expect((await as(d, undefined, '/health')).status).toBe(200);
  });

  it("scopes an agent's /status to the servers its globs match, and shows nothing of the config", async () => {
    const d = await echoDaemon();
    const { key } = await addAgent(d, { name: 'scoped', servers: ['ech*'] });
    type StatusBody = { servers: Array<{ name: string }>; discovery?: unknown };
    const scoped = await as<StatusBody>(d, key, '/status');
    expect(scoped.body.servers.map((s) => s.name)).toEqual(['echo']);
    expect(scoped.body).toMatchObject({ agent: 'scoped', serverCounts: { connected: 1 } });
    expect(scoped.body.discovery).toBeUndefined();
    const full = await as<StatusBody>(d, TOKEN, '/status');
    expect(full.body.servers.map((s) => s.name)).toEqual(['echo', 'other']);
  });

  it('expired and revoked keys answer 401 with their own codes; rotation stops the old key at once', async () => {
    let offset = 0;
    const clock = { ...systemClock, now: () => Date.now() + offset };
    const d = await echoDaemon({ deps: { clock } });
    const hour = 3_600_000;
    const soon = await addAgent(d, { name: 'soon', expiresAt: new Date(Date.now() + hour).toISOString() });
    const gone = await addAgent(d, { name: 'gone' });
    const turn = await addAgent(d, { name: 'turn' });

    expect((await as(d, soon.key, '/tools')).status).toBe(200);
    offset = 2 * hour;
    expect((await as(d, soon.key, '/tools')).body).toMatchObject({ error: { code: 'KEY_EXPIRED' } });
    expect((await d.json<{ status: string }>('/agents/soon')).body.status).toBe('expired');

    expect((await d.json('/agents/gone', { method: 'DELETE' })).body).toMatchObject({ agent: { name: 'gone', status: 'revoked' } });
    const revoked = await as(d, gone.key, '/tools');
    expect(revoked).toMatchObject({ status: 401, body: { error: { code: 'KEY_REVOKED' } } });

    const rotated = await d.json<Issued>('/agents/turn/rotate', { method: 'POST' });
    expect(rotated.status).toBe(200);
    expect(rotated.body.key).not.toBe(turn.key);
    expect(await as(d, turn.key, '/tools')).toMatchObject({ status: 401, body: { error: { code: 'KEY_REVOKED' } } });
    expect((await as(d, rotated.body.key, '/tools')).status).toBe(200);

    // A revoked name can be added again; a live one cannot, and an unknown one is 404.
    await addAgent(d, { name: 'gone' });
    expect((await d.json('/agents', { method: 'POST', body: { name: 'turn' } })).body).toMatchObject({ error: { code: 'AGENT_EXISTS' } });
    expect((await d.json('/agents/nobody/rotate', { method: 'POST' })).body).toMatchObject({ error: { code: 'AGENT_NOT_FOUND' } });
    expect((await d.json('/agents', { method: 'POST', body: { name: 'bad', servers: ['a['] } })).body).toMatchObject({
      error: { code: 'VALIDATION_FAILED', message: expect.stringContaining('servers.0') },
    });
  });

  it('never keeps, logs or shows a key in clear: database files, logs, /status, events', async () => {
    const d = await echoDaemon({ captureLogs: 'trace', config: { requestLogging: true } });
    const events = recordDaemonEvents(d.daemon);
    const first = await addAgent(d, { name: 'secretive' });
    const second = (await d.json<Issued>('/agents/secretive/rotate', { method: 'POST' })).body;
    await as(d, second.key, '/tools/mcp_echo_echo/call', { method: 'POST', body: JSON.stringify({ arguments: { text: 'x' } }) });
    await as(d, first.key, '/tools');
    const status = JSON.stringify((await as(d, TOKEN, '/status')).body) + JSON.stringify((await as(d, TOKEN, '/agents')).body);

    const dir = dirname(d.config.dbPath as string);
    // The open database: the main file and its write-ahead log, where fresh rows live.
    const files = (await readdir(dir)).filter((name) => name.startsWith('switchboard.db'));
    expect(files).toContain('switchboard.db');
    const bytes = Buffer.concat(await Promise.all(files.map((name) => readFile(join(dir, name)))));
    for (const { key } of [first, second]) {
      // Everything after `sbk_<16 hex id>_`: the secret's 43 base64url characters may hold `_` too.
      const secret = key.slice('sbk_'.length + 16 + 1);
      expect(secret).toHaveLength(43);
      expect(bytes.includes(Buffer.from(secret)), 'database').toBe(false);
      expect(d.logs.text(), 'logs').not.toContain(secret);
      expect(status, '/status').not.toContain(secret);
      expect(JSON.stringify(events), 'events').not.toContain(secret);
    }
    expect(d.logs.text()).not.toContain(TOKEN);
    expect(d.logs.text()).toContain('/agents/secretive/rotate');
  });
});

describe('agents on /mcp', () => {
  const connect = async (d: TestDaemon, key: string, mode: 'legacy' | { pin: string }) => {
    const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode } });
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', d.url), { requestInit: bearer(key) });
    await client.connect(transport);
    onTestFinished(() => client.close());
    return { client, transport };
  };

  it('serves an agent key in both eras; a 2025 session belongs to the key that opened it', async () => {
    const d = await echoDaemon();
    const a = await addAgent(d, { name: 'a' });
    const b = await addAgent(d, { name: 'b' });

    const modern = await connect(d, a.key, { pin: '2026-07-28' });
    expect(await modern.client.callTool({ name: 'mcp_echo_echo', arguments: { text: 'modern' } })).toMatchObject({ content: [{ text: 'modern' }] });

    const legacy = await connect(d, a.key, 'legacy');
    expect(await legacy.client.callTool({ name: 'mcp_echo_echo', arguments: { text: 'legacy' } })).toMatchObject({ content: [{ text: 'legacy' }] });
    const sessionId = legacy.transport.sessionId as string;
    expect(sessionId).toBeTruthy();

    const request = (key: string) =>
      fetch(new URL('/mcp', d.url), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'mcp-session-id': sessionId,
          'mcp-protocol-version': '2025-11-25',
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }),
      });
    const other = await request(b.key);
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ error: { data: { code: 'MCP_SESSION_NOT_FOUND' } } });
    const operator = await request(TOKEN);
    expect(operator.status).toBe(404);
    await operator.body?.cancel();
    const own = await request(a.key);
    expect(own.status).toBe(200);
    await own.body?.cancel();

    const none = await fetch(new URL('/mcp', d.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(none.status).toBe(401);
    await none.body?.cancel();
  });
});

describe('an agent feed after its key ends', () => {
  it('closes with 4401 when the key is revoked, rotated, or expires, and keeps the operator and other agents', async () => {
    let offset = 0;
    const clock = { ...systemClock, now: () => Date.now() + offset };
    const d = await echoDaemon({ deps: { clock } });
    const hour = 3_600_000;
    const gone = await addAgent(d, { name: 'gone' });
    const turn = await addAgent(d, { name: 'turn' });
    const soon = await addAgent(d, { name: 'soon', expiresAt: new Date(Date.now() + hour).toISOString() });
    const stays = await addAgent(d, { name: 'stays' });
    const feeds = {
      gone: await openEvents(d.url, { token: gone.key }),
      turn: await openEvents(d.url, { token: turn.key }),
      soon: await openEvents(d.url, { token: soon.key }),
      stays: await openEvents(d.url, { token: stays.key }),
      operator: await openEvents(d.url, { token: TOKEN }),
    };
    for (const ws of Object.values(feeds)) onTestFinished(() => ws.close());

    await d.json('/agents/gone', { method: 'DELETE' });
    expect(await closed(feeds.gone)).toEqual({ code: 4401, reason: 'key revoked' });
    await d.json('/agents/turn/rotate', { method: 'POST' });
    expect(await closed(feeds.turn)).toEqual({ code: 4401, reason: 'key revoked' });

    // Expiry is noticed at the next event the agent would get.
    offset = 2 * hour;
    await d.json('/servers/echo/reload', { method: 'POST' });
    expect(await closed(feeds.soon)).toEqual({ code: 4401, reason: 'key expired' });
    await nextEvent(feeds.stays, 'server.status');
    await nextEvent(feeds.operator, 'server.status');
  });
});
