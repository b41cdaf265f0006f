import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { deferred } from '../../src/util/deferred.js';
import { discoveryOf, nextDaemonEvent, startDaemon, startEchoDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { holdInitialize } from '../helpers/hold-initialize.js';

/** Health, readiness, status, servers, metrics and the error shape, over real HTTP. */

const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

interface ErrorBody {
  error: { code: string; message: string };
}
interface StatusBody {
  state: string;
  version: string;
  startedAt: string;
  uptimeSeconds: number;
  catalogue: { version: number; toolCount: number };
  toolCount: number;
  serverCounts: Record<string, number>;
  servers: Array<{ name: string; status: string }>;
  errors: Array<{ path: string; error: { code: string; message: string } }>;
  collisions: unknown[];
  discovery: { error: { code: string; message: string } | null; warnings: unknown[]; shadowed: Array<Record<string, unknown>>; exaApiKeyCount: number };
}
interface DetailBody {
  name: string;
  tools: string[];
  stderrTail: string[];
  connectedSince: string;
}

describe('GET /health and /ready', () => {
  it('/health answers 200 at once; /ready is 503 NOT_READY until the startup gate resolves, then 200', async () => {
    const discovery = deferred();
    const hold = await holdInitialize();
    const sb = await startDaemon({
      until: 'listening',
      // The slow server has no cache entry (fresh temp db), so the gate must wait for it.
      discover: async () => {
        await discovery.promise;
        return discoveryOf({ slow: fixtureServerConfig('slow-initialize', { env: { INIT_DELAY_MS: '0', ...hold.env } }) });
      },
    });

    const health = await sb.json('/health');
    expect(health).toMatchObject({ status: 200, body: { status: 'ok' } });
    const early = await sb.json<ErrorBody>('/ready');
    expect(early.status).toBe(503);
    expect(early.body.error.code).toBe('NOT_READY');

    const connecting = nextDaemonEvent(sb.daemon, 'server.status', (e) => e.server === 'slow' && e.status === 'connecting');
    discovery.resolve();
    await connecting;
    // The uncached server is held in its initialize: still not ready, past the gate or not.
    expect((await sb.json<ErrorBody>('/ready')).body.error.code).toBe('NOT_READY');
    const noWait = await sb.json<{ tools: unknown[] }>('/tools?wait=false');
    expect(noWait.status).toBe(200);
    expect(noWait.body.tools).toEqual([]);

    await hold.release();
    await sb.daemon.start();
    expect(await sb.json('/ready')).toMatchObject({ status: 200, body: { status: 'ready' } });
    expect((await sb.json('/health')).status).toBe(200);
  });

  it('/ready answers 503 SHUTTING_DOWN while stopping, as does every route but /health', async () => {
    const sb = await startEchoDaemon();
    sb.daemon.runtime.stopAccepting();
    expect(await sb.json('/health')).toMatchObject({ status: 200, body: { status: 'ok' } });
    for (const [method, path] of [
      ['GET', '/ready'],
      ['GET', '/status'],
      ['GET', '/tools'],
      ['POST', '/reload'],
      ['POST', '/servers/echo/disconnect'],
    ] as const) {
      const res = await sb.json<ErrorBody>(path, { method });
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(res.body.error.code, `${method} ${path}`).toBe('SHUTTING_DOWN');
    }
  });
});

describe('GET /status', () => {
  it('reports state, version, catalogue, servers, load errors and what discovery found', async () => {
    const echo = fixtureServerConfig('echo-stdio');
    const sb = await startDaemon({
      discover: async () =>
        discoveryOf(
          // A stdio entry without a command fails validation and must show up as a load error.
          { echo, broken: { type: 'stdio' } },
          {
            warnings: [{ message: 'unknown key "foo"', path: '/test/mcp.json' }],
            shadowed: [
              {
                name: 'echo-copy',
                source: { provider: 'cursor', providerName: 'Cursor', path: '/home/u/.cursor/mcp.json', level: 'user' },
                shadowedBy: { name: 'echo', source: { provider: 'test', providerName: 'Test', path: '/test/mcp.json', level: 'native' } },
                reason: 'same-connection',
              },
            ],
            exaApiKeys: ['exa-key-1', 'exa-key-2'],
          },
        ),
    });

    const { status, body } = await sb.json<StatusBody>('/status');
    expect(status).toBe(200);
    expect(body.state).toBe('ready');
    expect(body.version).toBe(PACKAGE_VERSION);
    expect(body.uptimeSeconds).toBeGreaterThanOrEqual(0);
    expect(Date.parse(body.startedAt)).not.toBeNaN();
    expect(body.catalogue).toEqual({ version: sb.daemon.manager.getCatalogue().version, toolCount: 3 });
    expect(body.toolCount).toBe(3);
    expect(body.serverCounts).toMatchObject({ connected: 1, failed: 1 });
    expect(body.servers.map((s) => [s.name, s.status])).toEqual([
      ['broken', 'failed'],
      ['echo', 'connected'],
    ]);
    expect(body.errors).toEqual([{ path: 'broken', error: { code: 'CONFIG_INVALID', message: expect.any(String) } }]);
    expect(body.collisions).toEqual([]);
    expect(body.discovery.error).toBeNull();
    expect(body.discovery.warnings).toEqual([{ message: 'unknown key "foo"', path: '/test/mcp.json' }]);
    expect(body.discovery.shadowed).toHaveLength(1);
    expect(body.discovery.shadowed[0]).toMatchObject({ name: 'echo-copy', reason: 'same-connection' });
    expect(body.discovery.exaApiKeyCount).toBe(2);
    expect(JSON.stringify(body)).not.toContain('exa-key-');
  });

  it('keeps running with an empty catalogue and says why when discovery itself fails', async () => {
    const sb = await startDaemon({
      discover: () => Promise.reject(new Error('loader exploded')),
    });
    const { body } = await sb.json<StatusBody>('/status');
    expect(body.state).toBe('ready');
    expect(body.toolCount).toBe(0);
    expect(body.errors).toEqual([{ path: '.mcp.json', error: { code: 'DISCOVERY_FAILED', message: 'loader exploded' } }]);
    expect(body.discovery.error).toEqual({ code: 'DISCOVERY_FAILED', message: 'loader exploded' });
  });
});

describe('GET /servers, GET /servers/:name', () => {
  it('lists snapshots and shows one server in detail with its tool names and stderr tail', async () => {
    const sb = await startDaemon({
      servers: {
        // Two lines: a line that is the whole of an env value would be masked, as a secret is.
        alpha: fixtureServerConfig('echo-stdio', { env: { STDERR_AT_START: 'alpha says hello on stderr|and more' } }),
        beta: fixtureServerConfig('echo-stdio'),
      },
    });

    const list = await sb.json<{ servers: Array<Record<string, unknown>> }>('/servers');
    expect(list.status).toBe(200);
    expect(list.body.servers.map((s) => s.name)).toEqual(['alpha', 'beta']);
    expect(list.body.servers[0]).toMatchObject({
      name: 'alpha',
      status: 'connected',
      transport: 'stdio',
      toolCount: 3,
      deferred: false,
      stale: false,
      lastError: null,
      source: { provider: 'test', providerName: 'Test' },
      serverInfo: { name: 'echo-stdio' },
    });

    const detail = await sb.json<DetailBody>('/servers/alpha');
    expect(detail.status).toBe(200);
    expect(detail.body.name).toBe('alpha');
    expect(detail.body.tools).toEqual(sb.daemon.manager.getCatalogue().namesOf('alpha'));
    expect(detail.body.tools).toHaveLength(3);
    expect(detail.body.stderrTail).toContain('alpha says hello on stderr');
    expect(Date.parse(detail.body.connectedSince)).not.toBeNaN();
  });

  it('answers 404 SERVER_NOT_FOUND for an unknown server', async () => {
    const sb = await startDaemon();
    const res = await sb.json<ErrorBody>('/servers/nope');
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({ code: 'SERVER_NOT_FOUND', message: 'No server named "nope"' });
  });
});

describe('error responses', () => {
  it('answers unknown routes with 404 ROUTE_NOT_FOUND as JSON', async () => {
    const sb = await startDaemon();
    for (const [method, path] of [
      ['GET', '/nope'],
      ['POST', '/status'],
      ['DELETE', '/tools'],
      ['GET', '/servers/a/b/c'],
    ] as const) {
      const res = await sb.fetch(path, { method });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(((await res.json()) as ErrorBody).error.code).toBe('ROUTE_NOT_FOUND');
    }
  });

  it('answers malformed JSON with 400, a non-JSON body with 415 and a huge body with 413, all as JSON', async () => {
    const sb = await startDaemon();
    const post = (body: string, contentType: string) => sb.fetch('/tools/mcp_x_y/call', { method: 'POST', body, headers: { 'content-type': contentType } });

    const malformed = await post('{"arguments": ', 'application/json');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message: 'body: Not valid JSON' } });

    const text = await post('hello', 'text/plain');
    expect(text.status).toBe(415);
    expect(((await text.json()) as ErrorBody).error.code).toBe('UNSUPPORTED_MEDIA_TYPE');

    const form = await post('a=1', 'application/x-www-form-urlencoded');
    expect(form.status).toBe(415);
    expect(((await form.json()) as ErrorBody).error.code).toBe('UNSUPPORTED_MEDIA_TYPE');

    const huge = await post(JSON.stringify({ arguments: { text: 'x'.repeat(5 * 1024 * 1024) } }), 'application/json');
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as ErrorBody).error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers a request the HTTP parser rejects with the same JSON shape', async () => {
    const sb = await startDaemon();
    const socket = connect(Number(new URL(sb.url).port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.write('NOT A REQUEST\r\n\r\n');
    await once(socket, 'close');
    const raw = Buffer.concat(chunks).toString('utf8');
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'request: Malformed HTTP' },
    });
  });

  it('names the offending field in 400 VALIDATION_FAILED', async () => {
    const sb = await startEchoDaemon();
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/tools/mcp_echo_echo/call', { arguments: [1, 2] }, 'arguments: Expected object'],
      ['POST', '/tools/mcp_echo_echo/call', { arguments: 'text' }, 'arguments: Expected object'],
      ['POST', '/tools/mcp_echo_echo/call', { timeoutMs: -5 }, 'timeoutMs: Expected a positive integer'],
      ['POST', '/tools/mcp_echo_echo/call', { timeoutMs: 1.5 }, 'timeoutMs: Expected a positive integer'],
      [
        'POST',
        '/tools/mcp_echo_echo/call',
        { args: {} },
        'args: Unknown field. Tool arguments go inside "arguments": send {"arguments": {"args": …}} (the body may also carry "timeoutMs")',
      ],
      ['POST', '/tools/mcp_echo_echo/call', [1], 'body: Expected object'],
      ['POST', '/reload', { force: true }, 'force: Unknown field'],
      ['POST', '/reload', [], 'body: Expected an empty object'],
      ['GET', '/tools?wait=maybe', undefined, 'wait: Expected "true" or "false"'],
      ['GET', '/tools?server=', undefined, 'server: Must not be empty'],
      ['GET', '/tools?q=a&q=b', undefined, 'q: Expected a single value'],
    ];
    for (const [method, path, body, message] of cases) {
      const res = await sb.json<ErrorBody>(path, { method, body });
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400);
      expect(res.body.error, `${method} ${path} ${JSON.stringify(body)}`).toEqual({ code: 'VALIDATION_FAILED', message });
    }
  });

  it('accepts an empty body with a JSON content type on operations and calls', async () => {
    const sb = await startEchoDaemon();
    const res = await sb.fetch('/servers/echo/reload', { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(200);
  });
});

describe('GET /metrics', () => {
  it('serves Prometheus text with servers by status, tools and calls by transport, server, tool and outcome', async () => {
    const sb = await startDaemon({ servers: { echo: fixtureServerConfig('echo-stdio'), broken: { type: 'stdio' } } });
    await sb.json('/tools/mcp_echo_echo/call', { method: 'POST', body: { arguments: { text: 'hi' } } });
    await sb.json('/tools/mcp_echo_echo/call', { method: 'POST', body: { arguments: { text: 42 } } });
    await sb.json('/tools/mcp_nope_nope/call', { method: 'POST', body: {} });

    const res = await sb.fetch('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const sample = (name: string) =>
      text
        .split('\n')
        .find((line) => line.startsWith(`${name} `))
        ?.split(' ')[1];
    expect(sample('switchboard_servers{status="connected"}')).toBe('1');
    expect(sample('switchboard_servers{status="failed"}')).toBe('1');
    expect(sample('switchboard_tools')).toBe('3');
    expect(sample('switchboard_tool_calls_total{transport="rest",server="echo",tool="mcp_echo_echo",outcome="ok"}')).toBe('1');
    expect(sample('switchboard_tool_calls_total{transport="rest",server="echo",tool="mcp_echo_echo",outcome="tool_error"}')).toBe('1');
    // A name no server has never becomes a series of its own (bounded cardinality).
    expect(sample('switchboard_tool_calls_total{transport="rest",server="",tool="_unknown",outcome="not_found"}')).toBe('1');
    expect(sample('switchboard_tool_call_duration_seconds_count')).toBe('3');
    expect(sample('switchboard_tool_call_duration_seconds_bucket{le="+Inf"}')).toBe('3');
    expect(sample('switchboard_tool_calls_in_flight')).toBe('0');
    // Every upstream request is counted by method too; a name no server has has no server.
    expect(sample('switchboard_upstream_requests_total{transport="rest",server="echo",method="tools/call",outcome="ok"}')).toBe('1');
    expect(sample('switchboard_upstream_requests_total{transport="rest",server="",method="tools/call",outcome="not_found"}')).toBe('1');
    expect(sample('switchboard_events_subscribers')).toBe('0');
    // Every sample line is `name{labels} value`, every family has HELP and TYPE. A value may be
    // NaN or ±Inf, which Prometheus reads case-blind (Go's ParseFloat): prom-client's event-loop
    // lag is `Nan` until its monitor has a sample, as on a scrape right after it was loaded.
    for (const line of text.trim().split('\n')) {
      expect(line).toMatch(/^(# (HELP|TYPE) \w+ .+|\w+(\{[^}]*\})? (-?[\d.e+-]+|[Nn]a[Nn]|[+-]?Inf))$/);
    }
  });
});
