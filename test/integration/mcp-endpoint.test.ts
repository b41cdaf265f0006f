import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { connectToServer } from '../../src/upstream/transport/client.js';
import { deferred, type Deferred } from '../../src/util/deferred.js';
import type { ServerConfig } from '../../src/config/types.js';
import { startDaemon, type StartDaemonOptions, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig, startFixtureHttp } from '../helpers/fixtures.js';
import { sharedByTests, sharedWithCleanup, startAhead } from '../helpers/shared.js';
import { tempDir, waitForFile } from '../helpers/process.js';

interface McpTestClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Resolves once the session's standalone GET stream (where notifications go) is open. */
  streamOpen: Promise<void>;
  /** Resolves when the server has accepted a POST carrying `method` (its response headers arrived). */
  accepted(method: string): Promise<void>;
}

/** An SDK client on `<daemon>/mcp`, watching its own HTTP traffic so tests await, never sleep. */
async function connectClient(daemon: TestDaemon): Promise<McpTestClient> {
  const streamOpen = deferred();
  const waiting = new Map<string, Deferred<void>>();
  const waiterFor = (method: string): Deferred<void> => {
    let waiter = waiting.get(method);
    if (!waiter) waiting.set(method, (waiter = deferred()));
    return waiter;
  };
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', daemon.url), {
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      if (init?.method === 'GET' && res.ok) streamOpen.resolve();
      if (init?.method === 'POST' && res.ok && typeof init.body === 'string') {
        const { method } = JSON.parse(init.body) as { method?: string };
        if (method) waiterFor(method).resolve();
      }
      return res;
    },
  });
  const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
  await client.connect(transport);
  onTestFinished(() => client.close());
  return { client, transport, streamOpen: streamOpen.promise, accepted: (method) => waiterFor(method).promise };
}

/**
 * `connectToServer`, with every upstream tool call's progress reported to `onProgress`, so a
 * test can act once the upstream handler is running instead of guessing with a sleep.
 */
function connectObservingProgress(onProgress: () => void): typeof connectToServer {
  return async (name, config, options) => {
    const connection = await connectToServer(name, config, options);
    const callTool: typeof connection.callTool = (tool, args, opts = {}) =>
      connection.callTool(tool, args, {
        ...opts,
        onProgress: (progress) => {
          onProgress();
          opts.onProgress?.(progress);
        },
      });
    return new Proxy(connection, {
      get(target, prop) {
        if (prop === 'callTool') return callTool;
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
}

/**
 * The echo server of the daemons below, over HTTP: one process for the file, and the reload test's
 * reload reconnects in milliseconds where a stdio echo's restart waited on node's start. /mcp is
 * what is tested; the echo's tools are the same over either transport.
 */
const echoHttp = sharedWithCleanup((cleanup) => startFixtureHttp('echo-http', { cleanup }));
const echoServer = async (): Promise<ServerConfig> => ({ type: 'http', url: (await echoHttp()).url });
/** The echo daemon of the tests that neither reload it nor change its config. */
const echoDaemon = sharedByTests(
  async () => startDaemon({ servers: { echo: await echoServer() }, lifetime: 'manual' }),
  (d) => d.close(),
);
/** A daemon for one test (that reloads, cancels or closes), started ahead with the others. */
const ownDaemon = (options: () => Promise<StartDaemonOptions>) =>
  sharedByTests(
    async () => startDaemon({ ...(await options()), lifetime: 'manual' }),
    (d) => d.close(),
  );
const forListing = ownDaemon(async () => ({ servers: { echo: await echoServer(), slow: fixtureServerConfig('slow-tool') } }));
const forReload = ownDaemon(async () => ({ servers: { echo: await echoServer() } }));
const forListChanged = ownDaemon(async () => ({ servers: { lc: fixtureServerConfig('list-changed') } }));
const forCancel = sharedWithCleanup(async (cleanup) => {
  const marker = join(await tempDir(cleanup), 'cancelled');
  const running = deferred();
  const daemon = await startDaemon({
    servers: { slow: fixtureServerConfig('slow-tool', { env: { CANCEL_MARKER: marker } }) },
    deps: { connect: connectObservingProgress(() => running.resolve()) },
    lifetime: 'manual',
  });
  cleanup(() => daemon.close());
  return { daemon, marker, running };
});
// A grace longer than the test's timeout: a close held open by the idle GET stream fails the test.
const forShutdown = ownDaemon(async () => ({ servers: { slow: fixtureServerConfig('slow-tool') }, config: { shutdownGraceMs: 600_000 } }));
// All started at once before the first test: one after another, each test's worker sat idle
// while its daemon's fixture servers started.
beforeAll(() => startAhead(echoDaemon, forListing, forReload, forListChanged, forCancel, forShutdown));

describe('/mcp', () => {
  it('lists the aggregated tools and calls one', async () => {
    const daemon = await forListing();
    const { client } = await connectClient(daemon);

    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    expect(client.getServerVersion()?.name).toBe('switchboard');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['mcp_echo_add', 'mcp_echo_echo', 'mcp_echo_reverse', 'mcp_slow_slow']);
    const reverse = tools.find((tool) => tool.name === 'mcp_echo_reverse');
    expect(reverse).toMatchObject({
      description: 'Reverses its text',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      annotations: { readOnlyHint: true, idempotentHint: true },
    });
    // Exactly the MCP fields: the bridge's own bookkeeping stays off the wire.
    expect(reverse).not.toHaveProperty('server');
    expect(reverse).not.toHaveProperty('deferred');

    const result = await client.callTool({ name: 'mcp_echo_add', arguments: { a: 2, b: 40 } });
    expect(result).toEqual({ content: [{ type: 'text', text: '42' }], structuredContent: { sum: 42 } });
  });

  it('answers an unknown tool with InvalidParams', async () => {
    const daemon = await echoDaemon();
    const { client } = await connectClient(daemon);
    const error = await client.callTool({ name: 'mcp_echo_nope', arguments: {} }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe(ProtocolErrorCode.InvalidParams);
    expect((error as ProtocolError).data).toEqual({ code: 'TOOL_NOT_FOUND' });
  });

  it('names the nearest tools in an unknown-tool error, as REST does (data.suggestions)', async () => {
    const daemon = await echoDaemon();
    const { client } = await connectClient(daemon);
    const error = await client.callTool({ name: 'echo', arguments: { text: 'hi' } }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe(ProtocolErrorCode.InvalidParams);
    expect((error as ProtocolError).data).toEqual({ code: 'TOOL_NOT_FOUND', suggestions: ['mcp_echo_echo'] });
  });

  it('sends notifications/tools/list_changed after a server reload', async () => {
    const daemon = await forReload();
    const { client, streamOpen } = await connectClient(daemon);
    const changed = deferred();
    client.setNotificationHandler('notifications/tools/list_changed', () => changed.resolve());
    await streamOpen;

    const { status } = await daemon.json('/servers/echo/reload', { method: 'POST' });
    expect(status).toBe(200);
    await changed.promise;
    expect((await client.listTools()).tools).toHaveLength(3);
  });

  it('passes an upstream list_changed on, with the new tool listed', async () => {
    const daemon = await forListChanged();
    const { client, streamOpen } = await connectClient(daemon);
    const changed = deferred();
    client.setNotificationHandler('notifications/tools/list_changed', () => changed.resolve());
    await streamOpen;

    await client.callTool({ name: 'mcp_lc_add_tool', arguments: { name: 'fresh' } });
    await changed.promise;
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('mcp_lc_fresh');
  });

  it('ends the session on DELETE', async () => {
    const daemon = await echoDaemon();
    const { transport } = await connectClient(daemon);
    const sessionId = transport.sessionId;
    expect(sessionId).toEqual(expect.any(String));

    await transport.terminateSession();
    const res = await daemon.fetch('/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId as string,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: -32001, data: { code: 'MCP_SESSION_NOT_FOUND' } } });
  });

  it('refuses a request without a session that is not an initialize', async () => {
    const daemon = await echoDaemon();
    const res = await daemon.fetch('/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, data: { code: 'MCP_SESSION_REQUIRED' } } });
  });

  it('cancels the upstream call when the MCP client cancels', async () => {
    const { daemon, marker, running } = await forCancel();
    const { client } = await connectClient(daemon);
    const abort = new AbortController();
    const call = client.callTool({ name: 'mcp_slow_slow', arguments: { durationMs: 60_000, progressEveryMs: 20 } }, { signal: abort.signal });
    const outcome = call.then(
      () => 'resolved',
      () => 'rejected',
    );
    // The first upstream progress proves the fixture's handler is running and listening.
    await running.promise;
    abort.abort(new Error('user gave up'));

    expect(await outcome).toBe('rejected');
    // The fixture writes the marker when it receives notifications/cancelled.
    expect(await waitForFile(marker, AbortSignal.timeout(10_000))).not.toBe('');
  });

  it('lets an in-flight call finish on shutdown, then closes idle sessions without hanging', async () => {
    const daemon = await forShutdown();
    const idle = await connectClient(daemon);
    await idle.streamOpen;
    const busy = await connectClient(daemon);
    const call = busy.client.callTool({ name: 'mcp_slow_slow', arguments: { durationMs: 300 } });
    await busy.accepted('tools/call');

    await daemon.close();
    const result = await call;
    expect(result.content).toEqual([{ type: 'text', text: expect.stringMatching(/^done after/) }]);
  });
});
