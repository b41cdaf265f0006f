import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ServerConfig } from '../../src/config/types.js';
import { connectToServer } from '../../src/upstream/transport/client.js';
import { deferred } from '../../src/util/deferred.js';
import { startDaemon } from '../helpers/daemon.js';
import { sharedByTests } from '../helpers/shared.js';
import { fixtureServerConfig, startFixtureHttp } from '../helpers/fixtures.js';
import { holdInitialize } from '../helpers/hold-initialize.js';
import { tempDir, waitForFile } from '../helpers/process.js';

/** `/tools`, `/tools/:name` and `POST /tools/:name/call` against real fixture servers. */

interface ErrorBody {
  error: { code: string; message: string };
}
interface ToolView {
  name: string;
  server: string;
  originalName: string;
  description?: string;
  path: string;
  inputSchema: unknown;
  deferred: boolean;
}
interface ToolList {
  version: number;
  tools: ToolView[];
}
interface CallResult {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: unknown;
  isError?: boolean;
}

/**
 * The echo tools for every daemon of the file but the slow ones: one `echo-http` server, a session
 * per daemon and server name, instead of an `echo-stdio` process each (five). Registered before
 * the daemons, so closed after them.
 */
const echoHttp = sharedByTests(
  () => startFixtureHttp('echo-http'),
  (http) => http.close(),
);
const echo = async (): Promise<ServerConfig> => ({ type: 'http', url: (await echoHttp()).url });

/**
 * `connectToServer`, with every tool call's progress notifications reported to `onProgress`.
 * The first progress proves the upstream handler is running (and listening for cancellation),
 * so a test can abort at exactly that point instead of guessing with a sleep.
 */
function connectObservingProgress(onProgress: () => void): typeof connectToServer {
  return async (name, config, options) => {
    const connection = await connectToServer(name, config, options);
    return new Proxy(connection, {
      get(target, prop) {
        if (prop === 'callTool') {
          const callTool: typeof target.callTool = (tool, args, opts = {}) =>
            target.callTool(tool, args, {
              ...opts,
              onProgress: (progress) => {
                onProgress();
                opts.onProgress?.(progress);
              },
            });
          return callTool;
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
}

/** One echo server as `a`, shared by the tests that only get and call its tools. */
const oneEcho = sharedByTests(
  async () => startDaemon({ servers: { a: await echo() }, lifetime: 'manual' }),
  (d) => d.close(),
);
/** Two echo servers, shared by the tests that only read the catalogue. */
const twoEchoes = sharedByTests(
  async () => startDaemon({ servers: { a: await echo(), b: await echo() }, lifetime: 'manual' }),
  (d) => d.close(),
);

describe('GET /tools', () => {
  it('serves the live catalogue, filtered by server and by a case-insensitive text', async () => {
    const sb = await twoEchoes();
    const all = await sb.json<ToolList>('/tools');
    expect(all.status).toBe(200);
    expect(all.headers.get('content-type')).toMatch(/^application\/json/);
    expect(all.body.version).toBe(sb.daemon.manager.getCatalogue().version);
    expect(all.body.tools.map((t) => t.name)).toEqual(['mcp_a_add', 'mcp_a_echo', 'mcp_a_reverse', 'mcp_b_add', 'mcp_b_echo', 'mcp_b_reverse']);
    expect(all.body.tools[1]).toMatchObject({
      name: 'mcp_a_echo',
      server: 'a',
      originalName: 'echo',
      description: 'Returns its text unchanged',
      path: 'mcp:a via Test',
      inputSchema: { type: 'object' },
      deferred: false,
    });

    const names = async (query: string) => (await sb.json<ToolList>(`/tools?${query}`)).body.tools.map((t) => t.name);
    expect(await names('server=b')).toEqual(['mcp_b_add', 'mcp_b_echo', 'mcp_b_reverse']);
    expect(await names('q=REVERSE')).toEqual(['mcp_a_reverse', 'mcp_b_reverse']);
    expect(await names('q=adds%20two')).toEqual(['mcp_a_add', 'mcp_b_add']);
    expect(await names('server=a&q=rev')).toEqual(['mcp_a_reverse']);
    expect(await names('server=zzz')).toEqual([]);
  });

  it('answers If-None-Match with 304 and no body until the catalogue changes', async () => {
    const sb = await startDaemon({ servers: { a: await echo(), b: await echo() } });
    const first = await sb.fetch('/tools');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^".+"$/);
    expect(first.headers.get('cache-control')).toBe('no-cache');

    const same = await sb.fetch('/tools', { headers: { 'if-none-match': etag! } });
    expect(same.status).toBe(304);
    expect(await same.text()).toBe('');
    expect(same.headers.get('etag')).toBe(etag);
    const listed = await sb.fetch('/tools', { headers: { 'if-none-match': `"other", W/${etag}` } });
    expect(listed.status).toBe(304);

    // Filters have their own tags: an unfiltered tag never validates a filtered list.
    const filtered = await sb.fetch('/tools?server=a', { headers: { 'if-none-match': etag! } });
    expect(filtered.status).toBe(200);
    const filteredTag = filtered.headers.get('etag');
    expect(filteredTag).not.toBe(etag);
    expect((await sb.fetch('/tools?server=a', { headers: { 'if-none-match': filteredTag! } })).status).toBe(304);
    expect((await sb.fetch('/tools?server=b', { headers: { 'if-none-match': filteredTag! } })).status).toBe(200);

    expect((await sb.json('/servers/b/disconnect', { method: 'POST' })).status).toBe(200);
    const changed = await sb.fetch('/tools', { headers: { 'if-none-match': etag! } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    const body = (await changed.json()) as ToolList;
    expect(body.tools.map((t) => t.server)).toEqual(['a', 'a', 'a']);
    expect((await sb.fetch('/tools?server=a', { headers: { 'if-none-match': filteredTag! } })).status).toBe(200);
  });

  it('does not let an ETag from another daemon process validate', async () => {
    const one = await oneEcho();
    const two = await startDaemon({ servers: { a: await echo() } });
    const tag = (await one.fetch('/tools')).headers.get('etag');
    expect((await two.fetch('/tools', { headers: { 'if-none-match': tag! } })).status).toBe(200);
  });

  it('serves cached tools of a slow server as deferred, and calling one waits for the server', async () => {
    const dbPath = join(await tempDir(), 'cache.db');
    // One config for both runs (the cache is per config hash); the hold is on for the second run only.
    const hold = await holdInitialize({ engaged: false });
    const servers = { lazy: fixtureServerConfig('slow-initialize', { env: { INIT_DELAY_MS: '0', ...hold.env } }) };
    // First run: no cache, so startup waits for the server and then caches its tools.
    const first = await startDaemon({ config: { dbPath }, servers });
    expect((await first.json<ToolList>('/tools')).body.tools.every((t) => !t.deferred)).toBe(true);
    await first.close();
    await hold.engage();

    const second = await startDaemon({ config: { dbPath, startupGateMs: 50 }, servers });
    const listed = await second.json<ToolList>('/tools');
    expect(listed.body.tools.map((t) => [t.name, t.deferred])).toEqual([
      ['mcp_lazy_add', true],
      ['mcp_lazy_echo', true],
      ['mcp_lazy_reverse', true],
    ]);
    const calling = second.json<CallResult>('/tools/mcp_lazy_echo/call', {
      method: 'POST',
      body: { arguments: { text: 'worth the wait' } },
    });
    await hold.release();
    const call = await calling;
    expect(call.body).toEqual({ content: [{ type: 'text', text: 'worth the wait' }] });
    expect((await second.json<ToolList>('/tools')).body.tools.every((t) => !t.deferred)).toBe(true);
  });
});

describe('GET /tools/:name', () => {
  it('returns one tool, or 404 TOOL_NOT_FOUND', async () => {
    const sb = await oneEcho();
    const tool = await sb.json<ToolView>('/tools/mcp_a_reverse');
    expect(tool.status).toBe(200);
    expect(tool.body).toMatchObject({ name: 'mcp_a_reverse', server: 'a', originalName: 'reverse' });
    const list = await sb.json<ToolList>('/tools');
    expect(list.body.tools.find((t) => t.name === 'mcp_a_reverse')).toEqual(tool.body);

    const missing = await sb.json<ErrorBody>('/tools/mcp_a_nope');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('TOOL_NOT_FOUND');
  });
});

// Concurrent: the three slow-tool tests each wait on a daemon and a server of their own (three
// processes at most), so their waits overlap; the rest only read the file's shared daemon. Each
// uses its test's own expect and onTestFinished (the global one may name another test while several run).
describe.concurrent('POST /tools/:name/call', () => {
  it('calls the tool and answers with its CallToolResult', async ({ expect }) => {
    const sb = await oneEcho();
    const echoed = await sb.json<CallResult>('/tools/mcp_a_echo/call', {
      method: 'POST',
      body: { arguments: { text: 'hello über' } },
    });
    expect(echoed.status).toBe(200);
    expect(echoed.body).toEqual({ content: [{ type: 'text', text: 'hello über' }] });

    const added = await sb.json<CallResult>('/tools/mcp_a_add/call', {
      method: 'POST',
      body: { arguments: { a: 2, b: 3 }, timeoutMs: 5000 },
    });
    expect(added.body).toEqual({ content: [{ type: 'text', text: '5' }], structuredContent: { sum: 5 } });
  });

  it('answers a tool-level failure as 200 with isError', async ({ expect }) => {
    const sb = await oneEcho();
    const res = await sb.json<CallResult>('/tools/mcp_a_echo/call', {
      method: 'POST',
      body: { arguments: { text: 42 } },
    });
    expect(res.status).toBe(200);
    expect(res.body.isError).toBe(true);
    // The server's own answer (its SDK validates the arguments), passed through unchanged.
    expect(res.body.content[0]?.text).toMatch(/Invalid arguments for tool echo/);
  });

  it('answers an unknown tool with 404 TOOL_NOT_FOUND', async ({ expect }) => {
    const sb = await oneEcho();
    const res = await sb.json<ErrorBody>('/tools/mcp_a_missing/call', { method: 'POST', body: { arguments: {} } });
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({ code: 'TOOL_NOT_FOUND', message: 'No tool named "mcp_a_missing"' });
  });

  it('cancels the upstream call when the HTTP client goes away', async ({ expect, onTestFinished }) => {
    const marker = join(await tempDir(onTestFinished), 'cancelled');
    const running = deferred();
    const sb = await startDaemon({
      lifetime: 'manual',
      servers: { slow: fixtureServerConfig('slow-tool', { env: { CANCEL_MARKER: marker } }) },
      deps: { connect: connectObservingProgress(() => running.resolve()) },
    });
    onTestFinished(() => sb.close());
    const client = new AbortController();
    const call = sb.fetch('/tools/mcp_slow_slow/call', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { durationMs: 60_000, progressEveryMs: 20 } }),
      signal: client.signal,
    });
    await running.promise;
    client.abort();
    await expect(call).rejects.toThrow();

    // The fixture writes the marker when it receives notifications/cancelled.
    expect(await waitForFile(marker)).not.toBe('');
    const metrics = await (await sb.fetch('/metrics')).text();
    expect(metrics).toContain('switchboard_tool_calls_total{transport="rest",server="slow",tool="mcp_slow_slow",outcome="cancelled"} 1');
    expect(metrics).toContain('switchboard_tool_calls_in_flight 0');
  });

  it('ends a call whose server is disconnected mid-call with an MCP error result', async ({ expect, onTestFinished }) => {
    const running = deferred();
    const sb = await startDaemon({
      lifetime: 'manual',
      servers: { slow: fixtureServerConfig('slow-tool') },
      deps: { connect: connectObservingProgress(() => running.resolve()) },
    });
    onTestFinished(() => sb.close());
    const call = sb.json<CallResult>('/tools/mcp_slow_slow/call', {
      method: 'POST',
      body: { arguments: { durationMs: 60_000, progressEveryMs: 20 } },
    });
    await running.promise;
    expect((await sb.json('/servers/slow/disconnect', { method: 'POST' })).status).toBe(200);
    const res = await call;
    expect(res.status).toBe(200);
    expect(res.body.isError).toBe(true);
    expect(res.body.content[0]?.text).toMatch(/^MCP error: /);
  });

  it('answers 503 SHUTTING_DOWN when shutdown outlasts the grace period', async ({ expect, onTestFinished }) => {
    const running = deferred();
    const sb = await startDaemon({
      lifetime: 'manual',
      config: { shutdownGraceMs: 100 },
      servers: { slow: fixtureServerConfig('slow-tool') },
      deps: { connect: connectObservingProgress(() => running.resolve()) },
    });
    onTestFinished(() => sb.close());
    const call = sb.json<ErrorBody>('/tools/mcp_slow_slow/call', {
      method: 'POST',
      body: { arguments: { durationMs: 60_000, progressEveryMs: 20 } },
    });
    await running.promise;
    const closed = sb.close();
    const res = await call;
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('SHUTTING_DOWN');
    await closed;
  });
});
