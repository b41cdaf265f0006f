import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import WebSocket from 'ws';
import { parse } from 'yaml';
import { discoveryOf, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig, startFixtureHttp } from '../helpers/fixtures.js';

/** Bearer auth on every route but /health, and no secret in any answer or log line. */

const TOKEN = 'sb-test-token-5c1e9f0a7d';
const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete', 'options', 'head'];

/** Every documented route (the openapi test proves these are exactly the served ones). */
function documentedRoutes(): Array<{ method: string; path: string }> {
  const spec = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as {
    paths: Record<string, Record<string, unknown>>;
  };
  return Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((key) => HTTP_METHODS.includes(key))
      .map((method) => ({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, 'x') })),
  );
}

async function openEvents(url: string, headers: Record<string, string> = {}): Promise<{ ws: WebSocket; hello: unknown }> {
  const ws = new WebSocket(url.replace(/^http/, 'ws'), { headers });
  onTestFinished(() => ws.terminate());
  const [data] = (await once(ws, 'message')) as [Buffer];
  return { ws, hello: JSON.parse(data.toString('utf8')) };
}

/** The status of a refused handshake, once the daemon has also closed the socket. */
async function handshakeStatus(url: string): Promise<number> {
  const ws = new WebSocket(url.replace(/^http/, 'ws'));
  ws.on('error', () => undefined);
  const [, response] = (await once(ws, 'unexpected-response')) as [ClientRequest, IncomingMessage];
  response.resume();
  // A refused upgrade socket is outside the HTTP server's keep-alive tracking; unless the daemon
  // closes it, it would hold `app.close()` open.
  if (!response.socket.destroyed) await once(response.socket, 'close');
  return response.statusCode ?? 0;
}

describe('bearer token', () => {
  it('guards every route but /health (and the dashboard files) with 401 UNAUTHORIZED', async () => {
    const sb = await startDaemon({ config: { token: TOKEN }, servers: { echo: fixtureServerConfig('echo-stdio') } });
    const routes = documentedRoutes();
    expect(routes.length).toBeGreaterThan(10);

    for (const { method, path } of routes) {
      for (const authorization of [undefined, 'Bearer wrong-token', `Basic ${TOKEN}`, 'Bearer', `Bearer ${TOKEN}x`]) {
        const res = await fetch(sb.url + path, {
          method,
          headers: authorization === undefined ? {} : { authorization },
        });
        const label = `${method} ${path} with ${authorization ?? 'no header'}`;
        if (path === '/health') {
          expect(res.status, label).toBe(200);
          continue;
        }
        // Where a browser lands after an upstream sign-in: public, guarded by its state instead.
        if (path === '/oauth/callback') {
          expect(res.status, label).toBe(400);
          expect(((await res.json()) as { error: { code: string } }).error.code, label).toBe('OAUTH_STATE_INVALID');
          continue;
        }
        // The dashboard's page and files hold no data: public (a made-up file name is a 404).
        if (path === '/ui' || path.startsWith('/ui/')) {
          expect(res.status, label).toBe(path === '/ui' ? 200 : 404);
          await res.arrayBuffer();
          continue;
        }
        expect(res.status, label).toBe(401);
        expect(res.headers.get('www-authenticate'), label).toBe('Bearer');
        expect(await res.json(), label).toEqual({
          error: { code: 'UNAUTHORIZED', message: 'A valid bearer token is required' },
        });
      }
    }
    // Unknown routes too: without the token nobody learns which routes exist.
    expect((await fetch(`${sb.url}/nope`)).status).toBe(401);
  });

  it('lets the right token through, with any case of the scheme', async () => {
    const sb = await startDaemon({ config: { token: TOKEN }, servers: { echo: fixtureServerConfig('echo-stdio') } });
    for (const { method, path } of documentedRoutes()) {
      const res = await fetch(sb.url + path, { method, headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status, `${method} ${path}`).not.toBe(401);
      await res.arrayBuffer();
    }
    expect((await fetch(`${sb.url}/status`, { headers: { authorization: `bearer ${TOKEN}` } })).status).toBe(200);
    expect((await fetch(`${sb.url}/nope`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
  });

  it('accepts ?token= on the /events handshake only', async () => {
    const sb = await startDaemon({ config: { token: TOKEN } });
    expect(await handshakeStatus(`${sb.url}/events`)).toBe(401);
    expect(await handshakeStatus(`${sb.url}/events?token=wrong`)).toBe(401);
    const byQuery = await openEvents(`${sb.url}/events?token=${TOKEN}`);
    expect(byQuery.hello).toMatchObject({ type: 'hello' });
    const byHeader = await openEvents(`${sb.url}/events`, { authorization: `Bearer ${TOKEN}` });
    expect(byHeader.hello).toMatchObject({ type: 'hello' });

    expect((await fetch(`${sb.url}/status?token=${TOKEN}`)).status).toBe(401);
    expect((await fetch(`${sb.url}/tools?token=${TOKEN}`)).status).toBe(401);
  });

  it('needs no token when none is configured', async () => {
    const sb = await startDaemon();
    expect((await fetch(`${sb.url}/status`)).status).toBe(200);
    expect((await fetch(`${sb.url}/metrics`)).status).toBe(200);
  });
});

describe('secrets', () => {
  const ENV_SECRET = 'env-secret-value-41d7';
  const HEADER_SECRET = 'header-secret-value-93be';
  const EXA_KEY = 'exa-key-value-0c2f';
  const SECRETS = [TOKEN, ENV_SECRET, HEADER_SECRET, EXA_KEY];

  async function secretDaemon(): Promise<TestDaemon> {
    // The HTTP fixture refuses requests without the header, so a connected `remote` proves the
    // secret header was really used.
    const http = await startFixtureHttp('echo-http', { env: { REQUIRED_HEADER: `x-api-key=${HEADER_SECRET}` } });
    onTestFinished(() => http.close());
    return startDaemon({
      config: { token: TOKEN, requestLogging: true },
      captureLogs: 'trace',
      discover: async () =>
        discoveryOf(
          {
            local: fixtureServerConfig('echo-stdio', { env: { API_SECRET: ENV_SECRET } }),
            remote: { type: 'http', url: http.url, headers: { 'x-api-key': HEADER_SECRET } },
          },
          { exaApiKeys: [EXA_KEY] },
        ),
    });
  }

  it('never shows env, header, token or Exa key values in /status, /servers or /tools', async () => {
    const sb = await secretDaemon();
    const bodies: string[] = [];
    for (const path of ['/status', '/servers', '/servers/local', '/servers/remote', '/tools', '/tools/mcp_remote_echo', '/metrics']) {
      const res = await sb.fetch(path);
      expect(res.status, path).toBe(200);
      bodies.push(await res.text());
    }
    const status = JSON.parse(bodies[0]!) as { servers: Array<{ name: string; status: string }>; discovery: { exaApiKeyCount: number } };
    expect(status.servers.map((s) => [s.name, s.status])).toEqual([
      ['local', 'connected'],
      ['remote', 'connected'],
    ]);
    expect(status.discovery.exaApiKeyCount).toBe(1);
    const { hello } = await openEvents(`${sb.url}/events?token=${TOKEN}`);
    bodies.push(JSON.stringify(hello));
    for (const secret of SECRETS) for (const body of bodies) expect(body).not.toContain(secret);
  });

  it('never writes them to the log, even with request logging and a ?token= URL', async () => {
    const sb = await secretDaemon();
    await sb.json('/tools/mcp_local_echo/call', { method: 'POST', body: { arguments: { text: 'hi' } } });
    await sb.json('/tools/mcp_remote_echo/call', { method: 'POST', body: { arguments: { text: 'hi' } } });
    await sb.json('/servers/remote/reload', { method: 'POST' });
    await sb.json('/servers/nope');
    await fetch(`${sb.url}/status`, { headers: { authorization: `Bearer ${TOKEN}-wrong` } });
    await openEvents(`${sb.url}/events?token=${TOKEN}`);
    await sb.close();

    const entries = sb.logs.entries();
    // Request logging really is on, and the WebSocket URL was logged with its token masked.
    const urls = entries.map((e) => (e.req as { url?: string } | undefined)?.url).filter(Boolean);
    expect(urls).toContain('/status');
    expect(urls).toContain('/events?token=****');
    const text = sb.logs.text();
    for (const secret of SECRETS) expect(text).not.toContain(secret);
  });
});
