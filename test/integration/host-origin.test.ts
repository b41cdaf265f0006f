import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { parse } from 'yaml';
import { rawExchange, rawRequest, type RawResponse } from '../helpers/raw-http.js';
import { tempDir, type Cleanup } from '../helpers/process.js';
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js';

/**
 * DNS-rebinding protection (issue #11 item 1), against real `switchboard serve` processes over
 * raw HTTP: every route openapi.yaml documents, the WebSocket upgrade and an unknown path refuse a
 * foreign `Host` or `Origin` with 403 before anything else, the token check included, and
 * answer as usual for the daemon's own names.
 */

const HTTP_METHODS = ['get', 'post', 'delete'];
const spec = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, unknown>>;
};

interface Route {
  method: string;
  path: string;
}

const ROUTES: Route[] = [
  ...Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((key) => HTTP_METHODS.includes(key))
      .map((method) => ({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, 'nope') })),
  ),
  { method: 'GET', path: '/no/such/route' },
];

const UPGRADE = {
  connection: 'Upgrade',
  upgrade: 'websocket',
  'sec-websocket-version': '13',
  'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
};

const TOKEN = 'host-check-token';

interface Daemon {
  serve: ServeProcess;
  url: string;
  port: number;
}

// What `beforeAll` starts is ended by the suite's `afterAll` below: a hook registered from inside
// `beforeAll` never ran, which left both daemons running after every run of this file.
const cleanups: Array<() => void | Promise<void>> = [];
const cleanup: Cleanup = (fn) => void cleanups.push(fn);

async function startServe(config: Record<string, unknown>): Promise<Daemon> {
  const dir = await tempDir(cleanup);
  const path = join(dir, 'switchboard.json');
  await writeFile(path, JSON.stringify({ dbPath: join(dir, 'cache.db'), port: 0, ...config }));
  const serve = spawnServe(['--config', path], { home: dir, cwd: dir }, cleanup);
  const url = await serve.listening();
  return { serve, url, port: Number(new URL(url).port) };
}

function send(daemon: Daemon, route: Route, headers: Record<string, string> = {}): Promise<RawResponse> {
  const body = route.method === 'POST' ? '{}' : undefined;
  return rawRequest(`${daemon.url}${route.path}`, {
    method: route.method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body ? { body } : {}),
  });
}

/** The stable code of a refusal, whether REST `{error}` or the JSON-RPC body `/mcp` answers. */
function refusalCode(response: RawResponse): string | undefined {
  const body = JSON.parse(response.body) as { error?: { code?: unknown; data?: { code?: string } } };
  if (typeof body.error?.code === 'string') return body.error.code;
  return body.error?.data?.code;
}

describe('Host and Origin checks (real daemon processes, raw HTTP)', () => {
  let open: Daemon;
  let guarded: Daemon;

  afterAll(async () => {
    // Daemons first (registered last), then their directories.
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  beforeAll(async () => {
    [open, guarded] = await Promise.all([
      startServe({}),
      startServe({
        token: TOKEN,
        allowedHosts: ['switchboard.lan', 'proxy.example:8443'],
        allowedOrigins: ['https://dash.example.com'],
      }),
    ]);
  }, 60_000);

  it('covers every documented route', () => {
    expect(ROUTES.length).toBeGreaterThan(15);
  });

  it.each(ROUTES)('$method $path: foreign Host or Origin → 403, own names → the normal answer (no token)', async (route) => {
    const port = open.port;
    const normal = await send(open, route);
    expect(normal.status).not.toBe(403);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'localhost', `LOCALHOST:${port}`]) {
      expect((await send(open, route, { host })).status, host).toBe(normal.status);
    }
    for (const origin of [`http://localhost:${port}`, `http://127.0.0.1:${port}`, `https://[::1]:${port}`]) {
      expect((await send(open, route, { origin })).status, origin).toBe(normal.status);
    }
    for (const host of ['evil.example', `evil.example:${port}`, `localhost:${port + 1}`, `127.0.0.1.evil.example:${port}`]) {
      const refused = await send(open, route, { host });
      expect(refused.status, host).toBe(403);
      expect(refusalCode(refused), host).toBe('FORBIDDEN_HOST');
    }
    for (const origin of ['http://evil.example', `http://evil.example:${port}`, 'null', `http://localhost:${port + 1}`, `file://localhost:${port}`]) {
      const refused = await send(open, route, { origin });
      expect(refused.status, origin).toBe(403);
      expect(refusalCode(refused), origin).toBe('FORBIDDEN_ORIGIN');
    }
  });

  it.each(ROUTES)('$method $path: with a token, the check still comes first and allowedHosts/allowedOrigins are honoured', async (route) => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const normal = await send(guarded, route, auth);
    expect(normal.status).not.toBe(403);
    expect(normal.status).not.toBe(401);
    const unauthenticated = await send(guarded, route);
    // Public: /health, the OAuth callback (400 without a valid state) and the dashboard's files.
    const publicStatus: Record<string, number> = { '/health': 200, '/oauth/callback': 400, '/ui': 200, '/ui/nope': 404 };
    expect(unauthenticated.status).toBe(publicStatus[route.path] ?? 401);

    const badHost = await send(guarded, route, { ...auth, host: 'evil.example' });
    expect(badHost.status).toBe(403);
    expect(refusalCode(badHost)).toBe('FORBIDDEN_HOST');
    const badOrigin = await send(guarded, route, { ...auth, origin: 'https://evil.example' });
    expect(badOrigin.status).toBe(403);
    expect(refusalCode(badOrigin)).toBe('FORBIDDEN_ORIGIN');
    // Refused before auth: no token is no different.
    expect((await send(guarded, route, { host: 'evil.example' })).status).toBe(403);

    for (const host of ['switchboard.lan', 'switchboard.lan:9999', 'proxy.example:8443']) {
      expect((await send(guarded, route, { ...auth, host })).status, host).toBe(normal.status);
    }
    expect((await send(guarded, route, { ...auth, host: 'proxy.example:9' })).status).toBe(403);
    for (const origin of ['https://dash.example.com', 'https://switchboard.lan']) {
      expect((await send(guarded, route, { ...auth, origin })).status, origin).toBe(normal.status);
    }
  });

  it('refuses the WebSocket upgrade of /events before it happens', async () => {
    const events = { method: 'GET', path: '/events' };
    expect((await send(open, events, UPGRADE)).status).toBe(101);
    const badHost = await send(open, events, { ...UPGRADE, host: 'evil.example' });
    expect(badHost.status).toBe(403);
    expect(refusalCode(badHost)).toBe('FORBIDDEN_HOST');
    const badOrigin = await send(open, events, { ...UPGRADE, origin: 'http://evil.example' });
    expect(badOrigin.status).toBe(403);
    expect(refusalCode(badOrigin)).toBe('FORBIDDEN_ORIGIN');

    const withToken = { ...UPGRADE, authorization: `Bearer ${TOKEN}` };
    expect((await send(guarded, events, withToken)).status).toBe(101);
    expect((await send(guarded, events, { ...withToken, host: 'evil.example' })).status).toBe(403);
    expect((await send(guarded, { method: 'GET', path: `/events?token=${TOKEN}` }, { ...UPGRADE, origin: 'http://evil.example' })).status).toBe(403);
  });

  it('a refused upgrade reaches a client that goes on sending after its request, every time (20 × 403 host, 403 origin, 401)', async () => {
    // Frames sent before the answer is read, as an eager client does: a socket destroyed right
    // after the answer had them unread and reset the connection, and the client lost its status.
    const upgrade = (daemon: Daemon, headers: Record<string, string>): string =>
      `GET /events HTTP/1.1\r\n${Object.entries({ host: `127.0.0.1:${daemon.port}`, ...UPGRADE, ...headers })
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('')}\r\n`;
    const bytes = 1024 * 1024;
    const cases: Array<{ daemon: Daemon; headers: Record<string, string>; status: number; code: string }> = [
      { daemon: open, headers: { host: 'evil.example' }, status: 403, code: 'FORBIDDEN_HOST' },
      { daemon: open, headers: { origin: 'http://evil.example' }, status: 403, code: 'FORBIDDEN_ORIGIN' },
      { daemon: guarded, headers: {}, status: 401, code: 'UNAUTHORIZED' },
    ];
    for (const { daemon, headers, status, code } of cases) {
      for (let i = 0; i < 20; i++) {
        const answer = await rawExchange(daemon.url, upgrade(daemon, headers), { bytes });
        expect(answer.status, `${code} #${i}`).toBe(status);
        expect(refusalCode(answer), `${code} #${i}`).toBe(code);
      }
    }
  });

  it('answers /mcp refusals with a JSON-RPC error body', async () => {
    const refused = await send(open, { method: 'POST', path: '/mcp' }, { host: 'evil.example' });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, data: { code: 'FORBIDDEN_HOST' } } });
  });

  it("judges each request on a keep-alive connection by its own Host and Origin, not the connection's last verdict", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    onTestFinished(() => agent.destroy());
    const own = `127.0.0.1:${open.port}`;
    const sequence: Array<[Record<string, string>, number]> = [
      [{ host: own }, 200],
      [{ host: 'evil.example' }, 403],
      [{ host: own }, 200],
      [{ host: own, origin: 'http://evil.example' }, 403],
      [{ host: own }, 200],
    ];
    const sockets = new Set<unknown>();
    for (const [headers, status] of sequence) {
      const answer = await new Promise<{ status: number; socket: unknown }>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port: open.port, path: '/status', agent, setHost: false, headers }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, socket: req.socket }));
        });
        req.on('error', reject);
        req.end();
      });
      sockets.add(answer.socket);
      expect([headers, answer.status]).toEqual([headers, status]);
    }
    // One connection carried them all.
    expect(sockets.size).toBe(1);
  });

  it('logs which header was refused, once per distinct value', async () => {
    // Refused every time (the verdict is remembered, the refusal is not skipped), logged once.
    for (let i = 0; i < 3; i++) expect((await send(open, { method: 'GET', path: '/status' }, { host: 'once.example' })).status).toBe(403);
    for (let i = 0; i < 2; i++) expect((await send(open, { method: 'GET', path: '/status' }, { origin: 'http://once.example' })).status).toBe(403);
    // Log lines arrive in order: once the marker is read, every earlier line is too.
    await send(open, { method: 'GET', path: '/status' }, { host: 'marker.example' });
    await open.serve.waitForLog((entry) => entry.value === 'marker.example');
    const refusals = open.serve.entries().filter((entry) => entry.value === 'once.example' || entry.value === 'http://once.example');
    expect(refusals.map((entry) => [entry.header, entry.value, entry.level])).toEqual([
      ['host', 'once.example', 40],
      ['origin', 'http://once.example', 40],
    ]);
  });
});
