import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { CallMetrics } from '../../src/gateway/requests/call-metrics.js';
import { RequestMetrics } from '../../src/gateway/requests/request-metrics.js';
import type { AgentRequest } from '../../src/gateway/requests/request-router.js';
import { MCPManager, type ServerTrafficEvent } from '../../src/upstream/manager.js';
import type { RuntimeState } from '../../src/runtime/runtime.js';
import { deferred } from '../../src/util/deferred.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir, waitForFile } from '../helpers/process.js';
import { testGateway } from '../helpers/gateway.js';
import type { Gateway } from '../../src/gateway/gateway.js';
import { CLIENT_GONE, type RequestOptions } from '../../src/gateway/index.js';

/**
 * Issue #20: the `RequestRunner`, the one path of every agent request (SPEC §7), over a real
 * manager and real fixture servers: each kind reaches its server and is counted in `/metrics`
 * under its method and outcome; requests in flight are tracked and cancelled at shutdown or when
 * the HTTP client goes away; a name not listed yet waits for the startup gate.
 */

const READY = { state: 'ready' as RuntimeState, whenReady: () => Promise.resolve() };

interface Runner {
  runner: Gateway;
  metrics: CallMetrics;
  requestMetrics: RequestMetrics;
  shutdown: AbortController;
}

function newRunner(manager: MCPManager, runtime: { state: RuntimeState; whenReady: () => Promise<unknown> } = READY): Runner {
  const shutdown = new AbortController();
  const runner = testGateway(manager, { runtime, shutdownSignal: shutdown.signal });
  return { runner, metrics: runner.metrics, requestMetrics: runner.requestMetrics, shutdown };
}

/** The samples of one metric, without the HELP and TYPE lines. */
function samples(lines: string[], metric: string): string[] {
  return lines.filter((line) => line.startsWith(`${metric}{`));
}

const requests = (labels: string, n: number) => `switchboard_upstream_requests_total{transport="rest",${labels}} ${n}`;
const toolCalls = (labels: string, n: number) => `switchboard_tool_calls_total{transport="rest",${labels}} ${n}`;

let manager: MCPManager;

beforeAll(async () => {
  manager = new MCPManager();
  const { errors } = await manager.connectServers({
    // The 2025 era: resources/subscribe is a request of its own there.
    rich: fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy' } }),
    slow: fixtureServerConfig('slow-tool'),
  });
  expect(errors).toEqual([]);
});

afterAll(() => manager.disconnectAll());

describe("the gateway's request path: each kind through the one path", () => {
  it('sends every kind to its server and counts each under its method and outcome; tool calls also per tool', async () => {
    const { runner, metrics, requestMetrics } = newRunner(manager);
    const run = (request: AgentRequest) => runner.request(request, { transport: 'rest' });

    expect(await run({ method: 'logging/setLevel', level: 'debug' })).toEqual({});
    // The level reached the server.
    expect(await run({ method: 'tools/call', name: 'mcp_rich_get_log_level', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'debug' }] });
    expect(await run({ method: 'prompts/get', name: 'mcp_rich_greet', arguments: { name: 'Ada' } })).toMatchObject({
      messages: [{ role: 'user', content: { type: 'text', text: 'Hello Ada' } }],
    });
    expect(await run({ method: 'resources/read', uri: 'fixture://static/hello' })).toMatchObject({
      contents: [{ uri: 'fixture://static/hello', text: 'hello world' }],
    });
    expect(await run({ method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'mcp_rich_greet' }, argument: { name: 'name', value: 'al' } } })).toMatchObject({
      completion: { values: ['alice', 'albert'] },
    });

    const updated = deferred<ServerTrafficEvent>();
    onTestFinished(
      manager.onServerTraffic((event) => {
        if (event.type === 'resource.updated') updated.resolve(event);
      }),
    );
    expect(await run({ method: 'resources/subscribe', uri: 'fixture://static/hello' })).toEqual({});
    // The subscription reached the server: it now announces updates of the resource.
    await run({ method: 'tools/call', name: 'mcp_rich_touch', arguments: { uri: 'fixture://static/hello' } });
    expect(await updated.promise).toEqual({ type: 'resource.updated', server: 'rich', uri: 'fixture://static/hello' });
    expect(await run({ method: 'resources/unsubscribe', uri: 'fixture://static/hello' })).toEqual({});

    await expect(run({ method: 'tools/call', name: 'mcp_rich_nothing' })).rejects.toMatchObject({ code: 'TOOL_NOT_FOUND' });
    await expect(run({ method: 'prompts/get', name: 'mcp_rich_nothing' })).rejects.toMatchObject({ code: 'PROMPT_NOT_FOUND' });
    await expect(run({ method: 'resources/read', uri: 'fixture://nowhere' })).rejects.toMatchObject({ code: 'RESOURCE_NOT_FOUND' });

    // A server and a method per series; `logging/setLevel` fans out to every server and names
    // nobody has count under server "".
    expect(samples(requestMetrics.render(), 'switchboard_upstream_requests_total')).toEqual([
      requests('server="",method="logging/setLevel",outcome="ok"', 1),
      requests('server="",method="prompts/get",outcome="not_found"', 1),
      requests('server="",method="resources/read",outcome="not_found"', 1),
      requests('server="",method="tools/call",outcome="not_found"', 1),
      requests('server="rich",method="completion/complete",outcome="ok"', 1),
      requests('server="rich",method="prompts/get",outcome="ok"', 1),
      requests('server="rich",method="resources/read",outcome="ok"', 1),
      requests('server="rich",method="resources/subscribe",outcome="ok"', 1),
      requests('server="rich",method="resources/unsubscribe",outcome="ok"', 1),
      requests('server="rich",method="tools/call",outcome="ok"', 2),
    ]);
    expect(samples(metrics.render(), 'switchboard_tool_calls_total')).toEqual([
      toolCalls('server="",tool="_unknown",outcome="not_found"', 1),
      toolCalls('server="rich",tool="mcp_rich_get_log_level",outcome="ok"', 1),
      toolCalls('server="rich",tool="mcp_rich_touch",outcome="ok"', 1),
    ]);
    expect(metrics.render()).toContain('switchboard_tool_call_duration_seconds_count 3');
  });

  it("answers a tool's failure as an isError result, counted as tool_error", async () => {
    const { runner, metrics, requestMetrics } = newRunner(manager);
    const result = await runner.call('mcp_slow_slow', { durationMs: 10_000 }, { transport: 'rest', timeoutMs: 100 });
    expect(result).toMatchObject({ isError: true, _meta: { 'switchboard/error': { code: 'TOOL_CALL_TIMEOUT' } } });
    expect(samples(requestMetrics.render(), 'switchboard_upstream_requests_total')).toEqual([requests('server="slow",method="tools/call",outcome="tool_error"', 1)]);
    expect(samples(metrics.render(), 'switchboard_tool_calls_total')).toEqual([toolCalls('server="slow",tool="mcp_slow_slow",outcome="tool_error"', 1)]);
  });
});

describe("the gateway's request path: requests in flight", () => {
  /** Starts a `slow` call that runs until the test says; resolves once the server has it. */
  async function slowCall(runner: Gateway, options: Partial<RequestOptions> = {}) {
    const dir = await tempDir();
    const started = join(dir, 'started');
    const until = join(dir, 'go');
    const call = runner.call('mcp_slow_slow', { durationMs: 0, untilFile: until, startedFile: started }, { transport: 'rest', ...options });
    const outcome = call.then(
      (ok) => ({ ok }),
      (err: unknown) => ({ err }),
    );
    await waitForFile(started);
    return { outcome, finish: () => writeFile(until, 'go') };
  }

  it('counts a slow call in flight while it runs, and not after', async () => {
    const { runner, requestMetrics } = newRunner(manager);
    expect(runner.inFlight).toBe(0);
    const call = await slowCall(runner);
    expect(runner.inFlight).toBe(1);
    await call.finish();
    expect(await call.outcome).toMatchObject({ ok: { content: [{ type: 'text' }] } });
    expect(runner.inFlight).toBe(0);
    expect(samples(requestMetrics.render(), 'switchboard_upstream_requests_total')).toEqual([requests('server="slow",method="tools/call",outcome="ok"', 1)]);
  });

  it('cancels the calls in flight at shutdown (outcome "shutdown") and refuses new ones', async () => {
    const { runner, metrics, requestMetrics, shutdown } = newRunner(manager);
    const call = await slowCall(runner);
    shutdown.abort();
    expect(await call.outcome).toMatchObject({ err: { code: 'SHUTTING_DOWN' } });
    expect(runner.inFlight).toBe(0);
    await expect(runner.request({ method: 'prompts/get', name: 'mcp_rich_plain' }, { transport: 'rest' })).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });

    expect(samples(requestMetrics.render(), 'switchboard_upstream_requests_total')).toEqual([
      requests('server="rich",method="prompts/get",outcome="shutdown"', 1),
      requests('server="slow",method="tools/call",outcome="shutdown"', 1),
    ]);
    expect(samples(metrics.render(), 'switchboard_tool_calls_total')).toEqual([toolCalls('server="slow",tool="mcp_slow_slow",outcome="shutdown"', 1)]);
  });

  it("cancels a REST call whose HTTP client went away (outcome 'cancelled')", async () => {
    const { runner, requestMetrics } = newRunner(manager);
    const dir = await tempDir();
    const started = join(dir, 'started');
    const handled = deferred<{ outcome: Promise<unknown> }>();
    const server = createServer((_req, res) => {
      const call = runner.call('mcp_slow_slow', { durationMs: 0, untilFile: join(dir, 'never'), startedFile: started }, { transport: 'rest', client: res });
      handled.resolve({
        outcome: call.then(
          () => 'answered',
          (err: unknown) => err,
        ),
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const client = httpRequest({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, method: 'POST' });
    client.on('error', () => undefined);
    client.end();
    const { outcome } = await handled.promise;
    await waitForFile(started);
    expect(runner.inFlight).toBe(1);

    client.destroy();
    expect(await outcome).toBe(CLIENT_GONE);
    expect(runner.inFlight).toBe(0);
    expect(samples(requestMetrics.render(), 'switchboard_upstream_requests_total')).toEqual([requests('server="slow",method="tools/call",outcome="cancelled"', 1)]);
  });
});

describe("the gateway's request path: the startup gate", () => {
  /** A runtime still starting: `whenReady` says when it was asked and settles when the test says. */
  function startingRuntime() {
    const gate = deferred<void>();
    const asked = deferred<void>();
    const runtime = {
      state: 'starting' as RuntimeState,
      whenReady: () => {
        asked.resolve();
        return gate.promise;
      },
    };
    return { runtime, gate, asked };
  }

  function emptyManager(): MCPManager {
    const fresh = new MCPManager();
    onTestFinished(() => fresh.disconnectAll());
    return fresh;
  }

  it('waits for the gate when a name is not listed while starting, then sends it', async () => {
    const late = emptyManager();
    const { runtime, gate, asked } = startingRuntime();
    const { runner, requestMetrics } = newRunner(late, runtime);
    const call = runner.call('mcp_late_echo', { text: 'hi' }, { transport: 'rest' });

    await asked.promise;
    expect(runner.inFlight).toBe(1);
    expect((await late.connectServers({ late: fixtureServerConfig('echo-stdio') })).errors).toEqual([]);
    runtime.state = 'ready';
    gate.resolve();

    expect(await call).toEqual({ content: [{ type: 'text', text: 'hi' }] });
    expect(samples(requestMetrics.render(), 'switchboard_upstream_requests_total')).toEqual([requests('server="late",method="tools/call",outcome="ok"', 1)]);
  });

  it('ends as TOOL_NOT_FOUND when the deadline is shorter than the gate', async () => {
    const { runtime, asked } = startingRuntime();
    const { runner, requestMetrics } = newRunner(emptyManager(), runtime);
    await expect(runner.call('mcp_late_echo', { text: 'hi' }, { transport: 'rest', timeoutMs: 50 })).rejects.toMatchObject({ code: 'TOOL_NOT_FOUND' });
    await asked.promise;
    expect(runner.inFlight).toBe(0);
    expect(samples(requestMetrics.render(), 'switchboard_upstream_requests_total')).toEqual([requests('server="",method="tools/call",outcome="not_found"', 1)]);
  });

  it('does not wait for the gate once the runtime is ready', async () => {
    let asked = false;
    const runtime = { state: 'ready' as RuntimeState, whenReady: () => ((asked = true), new Promise<never>(() => undefined)) };
    const { runner } = newRunner(emptyManager(), runtime);
    await expect(runner.call('mcp_late_echo', { text: 'hi' }, { transport: 'rest' })).rejects.toMatchObject({ code: 'TOOL_NOT_FOUND' });
    expect(asked).toBe(false);
  });
});
