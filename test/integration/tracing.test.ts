import { readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { CLI_METAFILE } from '../helpers/build-fixtures.js';
import { fixtureServerConfig, startFixtureHttp } from '../helpers/fixtures.js';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { tempDir, type Cleanup } from '../helpers/process.js';
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js';
import { sharedWithCleanup, startAhead } from '../helpers/shared.js';

/**
 * Issue #26 item 3, with real processes: a `switchboard serve` child exporting over OTLP/HTTP to
 * a receiver this test runs, a stdio and an HTTP fixture that echo the `_meta` (and the HTTP
 * `traceparent` header) they receive, and agents on `/mcp` and REST sending their own trace context.
 */

const SPAWN_TIMEOUT_MS = 60_000;
const PRELOAD = pathToFileURL(fileURLToPath(new URL('../helpers/module-log-preload.mjs', import.meta.url))).href;
/** Short export delays, so spans and metrics arrive within the test (awaited, never slept on). */
const FAST_EXPORT = { OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_METRIC_EXPORT_INTERVAL: '200' };

const AGENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const AGENT_SPAN = 'b7ad6b7169203331';
const REST_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const REST_SPAN = '00f067aa0ba902b7';

interface Started {
  serve: ServeProcess;
  url: string;
  /** The file the preload wrote every loaded module's URL to (none without `logModules`). */
  moduleLog: string | undefined;
}

/**
 * `logModules`: preload the module log (its load hooks run on a thread of their own: ~0.1 s more
 * CPU per start), for the tests that read which chunks loaded.
 */
async function startServe(config: Record<string, unknown>, env: Record<string, string>, cleanup: Cleanup, logModules = true): Promise<Started> {
  const home = await tempDir(cleanup);
  const configPath = join(home, 'switchboard.json');
  await writeFile(configPath, JSON.stringify({ dbPath: join(home, 'cache.db'), startupGateMs: 60_000, ...config }));
  const moduleLog = logModules ? join(home, 'modules.log') : undefined;
  const serve = spawnServe(
    ['--config', configPath, '--port', '0', '--no-project-config'],
    { home, cwd: home, env: { ...(moduleLog ? { NODE_OPTIONS: `--import=${PRELOAD}`, SWITCHBOARD_MODULE_LOG: moduleLog } : {}), ...env } },
    cleanup,
  );
  const url = await serve.listening();
  await serve.waitForLog((entry) => entry.msg === 'ready');
  return { serve, url, moduleLog };
}

/** The CLI bundle's chunks that hold the OpenTelemetry SDK or an OTLP exporter (from esbuild's metafile). */
async function sdkChunks(): Promise<string[]> {
  const meta = JSON.parse(await readFile(CLI_METAFILE, 'utf8')) as { outputs: Record<string, { inputs: Record<string, unknown> }> };
  return Object.entries(meta.outputs)
    .filter(([path, out]) => path.endsWith('.js') && Object.keys(out.inputs).some((input) => /node_modules\/@opentelemetry\/(sdk-|exporter-)/.test(input)))
    .map(([path]) => basename(path));
}

async function loadedFiles(moduleLog: string | undefined): Promise<string[]> {
  if (moduleLog === undefined) throw new Error('this daemon was started without the module log');
  return (await readFile(moduleLog, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((url) => basename(new URL(url).pathname));
}

async function restCall(
  url: string,
  tool: string,
  args: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: { content?: Array<{ text: string }> } }> {
  const res = await fetch(`${url}/tools/${tool}/call`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ arguments: args }) });
  return { status: res.status, body: (await res.json()) as { content?: Array<{ text: string }> } };
}

const traceIdOf = (traceparent: string): string => traceparent.split('-')[1]!;
const spanIdOf = (traceparent: string): string => traceparent.split('-')[2]!;

describe('tracing (OTLP, issue #26)', () => {
  // Each daemon (with its OTLP receiver and fixtures) starts in beforeAll, all at once: a start is
  // mostly waiting on processes (node's start, the fixtures' handshake), and one after another
  // they were most of this file's time. The first two tests read one daemon: their spans have
  // names of their own (tools/call of mcp_tm_* / mcp_th_* and of mcp_sup_crash_once), so each
  // finds its own among the receiver's.
  const traced = sharedWithCleanup(async (cleanup) => {
    const receiver = await startOtlpReceiver(cleanup);
    const http = await startFixtureHttp('trace-meta', { args: ['--http'], cleanup });
    const started = await startServe(
      {
        mcpServers: { tm: fixtureServerConfig('trace-meta'), th: { url: http.url, protocol: 'legacy' }, sup: fixtureServerConfig('supervised') },
        telemetry: { endpoint: receiver.url, protocol: 'http/json', serviceName: 'sb-under-test', headers: { 'x-otlp-key': 'otlp-secret-4711' } },
      },
      FAST_EXPORT,
      cleanup,
    );
    return { ...started, receiver, http };
  });
  const fromEnv = sharedWithCleanup(async (cleanup) => {
    const receiver: OtlpReceiver = await startOtlpReceiver(cleanup);
    const started = await startServe(
      { mcpServers: { tm: fixtureServerConfig('trace-meta') } },
      { ...FAST_EXPORT, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'sb-from-env' },
      cleanup,
      // Its test reads the receiver only.
      false,
    );
    return { ...started, receiver };
  });
  const untraced = sharedWithCleanup((cleanup) => startServe({ mcpServers: { tm: fixtureServerConfig('trace-meta') } }, {}, cleanup));
  beforeAll(() => startAhead(traced, fromEnv, untraced));

  it(
    'exports a SERVER span per agent request and a CLIENT span per attempt, continuing the agent trace into the upstream _meta and headers',
    async () => {
      const { serve, url, moduleLog, receiver, http } = await traced();

      // /mcp: the agent's traceparent in params._meta of tools/call.
      const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
      const transport = new StreamableHTTPClientTransport(new URL('/mcp', url));
      await client.connect(transport);
      onTestFinished(() => client.close());
      const agentParent = `00-${AGENT_TRACE}-${AGENT_SPAN}-01`;
      const viaMcp = await client.callTool({ name: 'mcp_tm_meta', arguments: {}, _meta: { traceparent: agentParent, tracestate: 'agent=1' } });
      const stdioSeen = JSON.parse((viaMcp.content as Array<{ text: string }>)[0]!.text) as { meta: Record<string, string>; traceparent: string | null };
      expect(traceIdOf(stdioSeen.meta.traceparent!)).toBe(AGENT_TRACE);
      expect(spanIdOf(stdioSeen.meta.traceparent!)).not.toBe(AGENT_SPAN);
      expect(stdioSeen.meta.tracestate).toBe('agent=1');

      // REST: the traceparent header; the HTTP upstream gets the context in _meta and as a header.
      const restParent = `00-${REST_TRACE}-${REST_SPAN}-01`;
      const viaRest = await restCall(url, 'mcp_th_meta', {}, { traceparent: restParent });
      expect(viaRest.status).toBe(200);
      const httpSeen = JSON.parse(viaRest.body.content![0]!.text) as { meta: Record<string, string>; traceparent: string | null };
      expect(traceIdOf(httpSeen.meta.traceparent!)).toBe(REST_TRACE);
      expect(httpSeen.traceparent).toBe(httpSeen.meta.traceparent);

      // Argument values never reach a span; a failure carries its code as error.type.
      expect((await restCall(url, 'mcp_tm_echo', { text: 'argument-value-never-exported' })).status).toBe(200);
      expect((await restCall(url, 'mcp_tm_nope', {})).status).toBe(404);

      const spans = await receiver.until(() => {
        const all = receiver.spans();
        const wanted = ['tools/call mcp_tm_meta', 'tools/call mcp_th_meta', 'tools/call mcp_tm_echo', 'tools/call mcp_tm_nope', 'tools/call meta', 'tools/call echo'];
        return wanted.every((name) => all.some((s) => s.name === name)) && all.filter((s) => s.name === 'tools/call meta').length === 2 && all;
      });
      const one = (name: string, trace?: string): ReceivedSpan => {
        const found = spans.filter((s) => s.name === name && (trace === undefined || s.traceId === trace));
        expect(found, name).toHaveLength(1);
        return found[0]!;
      };

      // The /mcp request: SERVER span, child of the agent's span; its attempt: CLIENT span, child of it.
      const mcpServer = one('tools/call mcp_tm_meta');
      expect(mcpServer).toMatchObject({ kind: SPAN_KIND.server, traceId: AGENT_TRACE, parentSpanId: AGENT_SPAN });
      expect(mcpServer.attributes).toMatchObject({
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'mcp_tm_meta',
        'gen_ai.operation.name': 'execute_tool',
        'network.transport': 'tcp',
        'mcp.session.id': transport.sessionId,
        'switchboard.transport': 'mcp',
        'switchboard.server': 'tm',
      });
      expect(mcpServer.attributes['jsonrpc.request.id']).toEqual(expect.any(String));
      expect(mcpServer.resource).toMatchObject({ 'service.name': 'sb-under-test' });
      const stdioAttempt = one('tools/call meta', AGENT_TRACE);
      expect(stdioAttempt).toMatchObject({ kind: SPAN_KIND.client, parentSpanId: mcpServer.spanId, spanId: spanIdOf(stdioSeen.meta.traceparent!) });
      expect(stdioAttempt.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'meta', 'network.transport': 'pipe', 'switchboard.server': 'tm' });
      expect(stdioAttempt.attributes['mcp.protocol.version']).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\d$/));
      expect(stdioAttempt.attributes['server.address']).toBeUndefined();

      // The REST request and its attempt at the HTTP upstream (server.address / server.port).
      const restServer = one('tools/call mcp_th_meta');
      expect(restServer).toMatchObject({ kind: SPAN_KIND.server, traceId: REST_TRACE, parentSpanId: REST_SPAN });
      expect(restServer.attributes).toMatchObject({ 'switchboard.transport': 'rest', 'network.transport': 'tcp' });
      const httpAttempt = one('tools/call meta', REST_TRACE);
      const fixturePort = Number(new URL(http.url).port);
      expect(httpAttempt).toMatchObject({ kind: SPAN_KIND.client, parentSpanId: restServer.spanId, spanId: spanIdOf(httpSeen.traceparent!) });
      expect(httpAttempt.attributes).toMatchObject({ 'network.transport': 'tcp', 'server.address': '127.0.0.1', 'server.port': fixturePort, 'switchboard.server': 'th' });

      // Without a traceparent the request starts a trace of its own; the failure's code is error.type.
      const echoServer = one('tools/call mcp_tm_echo');
      expect(echoServer.parentSpanId).toBe('');
      expect(one('tools/call echo').traceId).toBe(echoServer.traceId);
      expect(one('tools/call mcp_tm_nope').attributes['error.type']).toBe('TOOL_NOT_FOUND');
      expect(one('tools/call mcp_tm_nope').status.code).toBe(2);

      // Metrics: both duration histograms arrive, in seconds.
      await receiver.until(() => {
        const text = receiver.exports
          .filter((e) => e.path === '/v1/metrics')
          .map((e) => e.body.toString('utf8'))
          .join('\n');
        return text.includes('"mcp.server.operation.duration"') && text.includes('"mcp.client.operation.duration"') && text.includes('"unit":"s"');
      });

      // Export headers reach the collector, and nowhere else: not the log, not /status, not the spans.
      expect(receiver.exports.every((e) => e.headers['x-otlp-key'] === 'otlp-secret-4711')).toBe(true);
      const everything = receiver.exports.map((e) => e.body.toString('utf8')).join('\n');
      expect(everything).not.toContain('argument-value-never-exported');
      expect(everything).not.toContain('otlp-secret-4711');
      expect(await (await fetch(`${url}/status`)).text()).not.toContain('otlp-secret-4711');
      expect(serve.lines().join('\n')).not.toContain('otlp-secret-4711');
      expect(serve.entries().some((e) => e.msg === 'OpenTelemetry export on')).toBe(true);

      // The control for the test below: with telemetry on, the SDK and exporter chunks did load.
      const chunks = await sdkChunks();
      expect(chunks.length).toBeGreaterThan(0);
      expect((await loadedFiles(moduleLog)).filter((f) => chunks.includes(f)).length).toBeGreaterThan(0);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'gives a retry after a reconnect a CLIENT span of its own, under the same SERVER span',
    async () => {
      const { url, receiver } = await traced();
      const marker = join(await tempDir(), 'runs');
      // Idempotent: the first run kills the server mid-call, the call is sent again after the reconnect.
      const called = await restCall(url, 'mcp_sup_crash_once', { marker });
      expect(called).toMatchObject({ status: 200, body: { content: [{ text: 'ran 2 times' }] } });
      const [server, attempts] = await receiver.until(() => {
        const all = receiver.spans();
        const request = all.find((s) => s.name === 'tools/call mcp_sup_crash_once');
        const tries = all.filter((s) => s.name === 'tools/call crash_once');
        return request && tries.length === 2 && ([request, tries] as const);
      });
      expect(server.attributes['error.type']).toBeUndefined();
      for (const attempt of attempts) expect(attempt).toMatchObject({ kind: SPAN_KIND.client, traceId: server.traceId, parentSpanId: server.spanId });
      // The first attempt failed with the lost connection, the second succeeded.
      expect(attempts.map((a) => a.attributes['error.type'] !== undefined).sort()).toEqual([false, true]);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'exports http/protobuf from the OTEL_* variables alone',
    async () => {
      const { url, receiver } = await fromEnv();
      expect((await restCall(url, 'mcp_tm_echo', { text: 'x' })).status).toBe(200);
      const traces = await receiver.until(() => receiver.exports.find((e) => e.path === '/v1/traces' && e.body.includes('tools/call mcp_tm_echo')));
      expect(traces.contentType).toBe('application/x-protobuf');
      expect(traces.body.includes('tools/call echo')).toBe(true);
      expect(traces.body.includes('sb-from-env')).toBe(true);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'loads no SDK or exporter module when no endpoint is configured',
    async () => {
      const { url, moduleLog } = await untraced();
      const called = await restCall(url, 'mcp_tm_meta', {}, { traceparent: `00-${REST_TRACE}-${REST_SPAN}-01` });
      expect(called.status).toBe(200);
      // Tracing off, nothing is added to the upstream request's _meta.
      const seen = JSON.parse(called.body.content![0]!.text) as { meta: Record<string, unknown> | null; traceparent: string | null };
      expect(seen.meta?.traceparent).toBeUndefined();
      expect(seen.traceparent).toBeNull();
      const loaded = await loadedFiles(moduleLog);
      expect(loaded).toContain('cli.js');
      const chunks = await sdkChunks();
      expect(chunks.length).toBeGreaterThan(0);
      expect(loaded.filter((f) => chunks.includes(f))).toEqual([]);
    },
    SPAWN_TIMEOUT_MS,
  );
});
