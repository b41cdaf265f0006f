import { Client, ProtocolError, StreamableHTTPClientTransport, type Progress, type StandardSchemaV1 } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { deferred } from '../../src/util/deferred.js';
import { textOf } from '../helpers/connect.js';
import { startDaemon, type TestDaemon, startEchoDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig, startFixtureHttp } from '../helpers/fixtures.js';
import { metricValue } from '../helpers/metrics.js';
import { modernToolCall } from '../helpers/mcp-client.js';
import { sharedByTests } from '../helpers/shared.js';
import type { ServerConfig } from '../../src/config/types.js';

/**
 * Issue #14 items 1, 3, 4 and 6: what travels with a call through `/mcp` — progress, log
 * messages, the server's questions to the agent (sampling, elicitation, roots) — for either
 * client era and either server era, and one call path whose calls `/metrics` counts.
 */

type Mode = 'legacy' | { pin: string };
const CLIENTS: Array<[string, Mode]> = [
  ['2025-11-25', 'legacy'],
  ['2026-07-28', { pin: '2026-07-28' }],
];

interface AgentOptions {
  /** Answers the agent gives; a missing one leaves the capability undeclared. */
  sampling?: string;
  elicitation?: string;
  roots?: string[];
}

async function agent(daemon: TestDaemon, mode: Mode, options: AgentOptions = {}): Promise<Client> {
  const client = new Client(
    { name: 'agent', version: '1.0.0' },
    {
      versionNegotiation: { mode },
      capabilities: {
        ...(options.sampling !== undefined ? { sampling: {} } : {}),
        ...(options.elicitation !== undefined ? { elicitation: { form: {} } } : {}),
        ...(options.roots !== undefined ? { roots: {} } : {}),
      },
    },
  );
  if (options.sampling !== undefined) {
    const text = options.sampling;
    client.setRequestHandler('sampling/createMessage', () => ({ role: 'assistant', content: { type: 'text', text }, model: 'test-model' }));
  }
  if (options.elicitation !== undefined) {
    const answer = options.elicitation;
    client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { answer } }));
  }
  if (options.roots !== undefined) {
    const roots = options.roots.map((uri) => ({ uri }));
    client.setRequestHandler('roots/list', () => ({ roots }));
  }
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', daemon.url)));
  onTestFinished(() => client.close());
  return client;
}

/** The 2026-07-28 HTTP fixture every test of this file aggregates: each opens its own sessions. */
const modernUpstream = sharedByTests(
  () => startFixtureHttp('rich-http', { env: { ERA: 'modern' } }),
  (http) => http.close(),
);

const stdioConfig = async (): Promise<ServerConfig> => fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy' } });
const modernConfig = async (): Promise<ServerConfig> => ({ type: 'http', url: (await modernUpstream()).url });

/**
 * A daemon aggregating each upstream kind as configured by default, shared by the tests that
 * only call through it: each test's agent has a session of its own. Tests that configure the
 * entry (roots) or change the server (its log level) start their own.
 */
const sharedDaemonOf = (config: () => Promise<ServerConfig>) =>
  sharedByTests(
    async () => startDaemon({ servers: { rich: await config() }, lifetime: 'manual' }),
    (daemon) => daemon.close(),
  );
const stdioDaemon = sharedDaemonOf(stdioConfig);
const modernDaemon = sharedDaemonOf(modernConfig);
/** The same with the entry's own roots: read-only for the tests, so shared by both clients' tests. */
const rootedDaemonOf = (config: () => Promise<ServerConfig>, roots: string[]) =>
  sharedByTests(
    async () => startDaemon({ servers: { rich: { ...(await config()), roots } }, lifetime: 'manual' }),
    (daemon) => daemon.close(),
  );
const rootedDaemons = {
  legacy: { configured: rootedDaemonOf(stdioConfig, ['/configured/root']), confined: rootedDaemonOf(stdioConfig, ['/srv/shared', '/srv/docs']) },
  modern: { configured: rootedDaemonOf(modernConfig, ['/configured/root']), confined: rootedDaemonOf(modernConfig, ['/srv/shared', '/srv/docs']) },
};

/** The upstream kinds: a 2025-era stdio server that asks mid-call, and a 2026-07-28 HTTP server that answers input_required. */
const UPSTREAMS: Array<[string, () => Promise<ServerConfig>, () => Promise<TestDaemon>, 'legacy' | 'modern']> = [
  ['2025-era stdio server', stdioConfig, stdioDaemon, 'legacy'],
  ['2026-07-28 HTTP server', modernConfig, modernDaemon, 'modern'],
];

describe.each(CLIENTS)('a %s client on /mcp', (_client, mode) => {
  describe.each(UPSTREAMS)('calling a %s', (_upstream, _config, sharedDaemon, serverEra) => {
    it('gets every progress notification under its own token, and the result', async () => {
      const daemon = await sharedDaemon();
      const client = await agent(daemon, mode);
      const seen: Progress[] = [];
      const result = await client.callTool({ name: 'mcp_rich_progress', arguments: { steps: 4 } }, { onprogress: (progress) => seen.push(progress) });
      expect(textOf(result)).toBe('done after 4 steps');
      expect(seen.map((p) => [p.progress, p.total, p.message])).toEqual([
        [1, 4, 'step 1'],
        [2, 4, 'step 2'],
        [3, 4, 'step 3'],
        [4, 4, 'step 4'],
      ]);
    });

    it("relays the server's sampling, elicitation and roots questions to the agent and its answers back", async () => {
      const daemon = await sharedDaemon();
      const client = await agent(daemon, mode, { sampling: 'Paris', elicitation: 'Ada', roots: ['file:///agent/project'] });
      expect(textOf(await client.callTool({ name: 'mcp_rich_ask_sampling', arguments: { prompt: 'Capital of France?' } }))).toBe('sampled: Paris');
      expect(textOf(await client.callTool({ name: 'mcp_rich_ask_elicitation', arguments: { message: 'Name?' } }))).toBe('elicited: accept Ada');
      expect(textOf(await client.callTool({ name: 'mcp_rich_ask_roots', arguments: {} }))).toBe('roots: file:///agent/project');
    });

    it("refuses a question the agent cannot answer at once, and answers roots with the server entry's", async () => {
      const daemon = await rootedDaemons[serverEra].configured();
      const client = await agent(daemon, mode);
      const refused = await client.callTool({ name: 'mcp_rich_ask_sampling', arguments: {} }).catch((err: unknown) => err);
      if (serverEra === 'modern') {
        expect(refused).toBeInstanceOf(ProtocolError);
        // A 2026-07-28 server is told what the agent declared and refuses itself, with the
        // revision's error for it, which reaches the agent as it is.
        expect((refused as ProtocolError).code).toBe(-32021);
      } else {
        // A 2025 server asks anyway, and Switchboard refuses in its place.
        expect((refused as { isError?: boolean }).isError).toBe(true);
        expect(textOf(refused as { content: unknown })).toMatch(/cannot relay sampling\/createMessage.*did not declare/);
      }
      expect(textOf(await client.callTool({ name: 'mcp_rich_ask_roots', arguments: {} }))).toBe('roots: file:///configured/root');
    });

    it("confines the agent's roots to the server entry's: inside stays, outside goes, a wider one narrows (issue #36 item 1)", async () => {
      const daemon = await rootedDaemons[serverEra].confined();
      const client = await agent(daemon, mode, { roots: ['file:///srv/shared/project', 'file:///home/agent', 'file:///srv'] });
      expect(textOf(await client.callTool({ name: 'mcp_rich_ask_roots', arguments: {} }))).toBe('roots: file:///srv/shared/project,file:///srv/shared,file:///srv/docs');
      // Without roots of its own an entry passes the agent's on as they are; with no agent's, none.
      const open = await sharedDaemon();
      const other = await agent(open, mode, { roots: ['file:///home/agent'] });
      expect(textOf(await other.callTool({ name: 'mcp_rich_ask_roots', arguments: {} }))).toBe('roots: file:///home/agent');
      expect(textOf(await (await agent(open, mode)).callTool({ name: 'mcp_rich_ask_roots', arguments: {} }))).toBe('roots: ');
    });
  });

  it('logs: setLevel reaches the servers and filters what the agent gets; messages name their server', async () => {
    const daemon = await startDaemon({ servers: { rich: fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy' } }) } });
    const client = await agent(daemon, mode);
    const messages: Array<Record<string, unknown>> = [];
    client.setNotificationHandler('notifications/message', (n) => void messages.push(n.params as Record<string, unknown>));
    if (mode === 'legacy') {
      await client.setLoggingLevel('warning');
      expect(textOf(await client.callTool({ name: 'mcp_rich_get_log_level', arguments: {} }))).toBe('warning');
      await client.callTool({ name: 'mcp_rich_log', arguments: { level: 'info', text: 'too quiet' } });
      await client.callTool({ name: 'mcp_rich_log', arguments: { level: 'error', text: 'loud' } });
      const later = deferred();
      client.setNotificationHandler('notifications/message', (n) => {
        messages.push(n.params as Record<string, unknown>);
        if ((n.params as { data?: unknown }).data === 'after the call') later.resolve();
      });
      // A message outside any call goes to every session whose level lets it through.
      await client.callTool({ name: 'mcp_rich_log_later', arguments: { text: 'after the call' } });
      await later.promise;
      expect(messages).toEqual([
        { level: 'error', logger: 'rich/fixture', data: 'loud' },
        { level: 'warning', logger: 'rich/fixture', data: 'after the call' },
      ]);
    } else {
      // The 2026-07-28 revision asks for log messages per request, with a level in `_meta`.
      await client.callTool({ name: 'mcp_rich_log', arguments: { level: 'error', text: 'unasked' } });
      await client.request(
        { method: 'tools/call', params: { name: 'mcp_rich_log', arguments: { level: 'error', text: 'asked' }, _meta: { 'io.modelcontextprotocol/logLevel': 'info' } } },
        { '~standard': { version: 1, vendor: 't', validate: (value) => ({ value }) } },
      );
      expect(messages).toEqual([{ level: 'error', logger: 'rich/fixture', data: 'asked' }]);
    }
    const { body } = await daemon.json<{ logMessages: Array<{ level: string; logger?: string; data: unknown }> }>('/servers/rich');
    expect(body.logMessages.map((m) => m.data)).toContain(mode === 'legacy' ? 'loud' : 'asked');
  });
});

describe('one call path for REST and /mcp', () => {
  it('refuses a question during a REST call with a clear error, never a hang', async () => {
    const daemon = await stdioDaemon();
    const { body } = await daemon.json<{ isError: boolean; content: Array<{ text: string }> }>('/tools/mcp_rich_ask_elicitation/call', { method: 'POST', body: {} });
    expect(body.isError).toBe(true);
    expect(body.content[0]?.text).toMatch(/cannot relay elicitation\/create.*REST/);
  });

  it('counts /mcp calls and REST calls in /metrics by transport, server, tool and outcome', async () => {
    const daemon = await startEchoDaemon();
    const client = await agent(daemon, 'legacy');
    await client.callTool({ name: 'mcp_echo_echo', arguments: { text: 'a' } });
    await client.callTool({ name: 'mcp_echo_echo', arguments: { text: 'b' } });
    await client.callTool({ name: 'mcp_echo_nope', arguments: {} }).catch(() => undefined);
    await daemon.json('/tools/mcp_echo_echo/call', { method: 'POST', body: { arguments: { text: 'c' } } });
    const text = await (await daemon.fetch('/metrics')).text();
    expect(text).toContain('switchboard_tool_calls_total{transport="mcp",server="echo",tool="mcp_echo_echo",outcome="ok"} 2');
    expect(text).toContain('switchboard_tool_calls_total{transport="mcp",server="",tool="_unknown",outcome="not_found"} 1');
    expect(text).toContain('switchboard_tool_calls_total{transport="rest",server="echo",tool="mcp_echo_echo",outcome="ok"} 1');
    expect(text).toContain('switchboard_tool_call_duration_seconds_count 4');
  });
});

describe('2026-07-28 input_required through Switchboard', () => {
  const call = (daemon: TestDaemon, params: Record<string, unknown>) => modernToolCall(daemon.url, params);

  it('asks with input_required and a requestState; the retry with the answer gets the result; a tampered state is refused', async () => {
    const daemon = await stdioDaemon();
    const first = await call(daemon, { name: 'mcp_rich_ask_elicitation', arguments: { message: 'Name?' } });
    expect(first.result).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
    const requests = first.result?.inputRequests as Record<string, { method: string; params: { message: string } }>;
    const [key, request] = Object.entries(requests)[0]!;
    expect(request).toMatchObject({ method: 'elicitation/create', params: { message: 'Name?' } });

    const tampered = await call(daemon, {
      name: 'mcp_rich_ask_elicitation',
      arguments: {},
      inputResponses: { [key]: { action: 'accept', content: { answer: 'x' } } },
      requestState: `${String(first.result?.requestState)}-TAMPERED`,
    });
    expect(tampered.error).toMatchObject({ code: -32602, message: expect.stringContaining('requestState') });

    const retry = await call(daemon, {
      name: 'mcp_rich_ask_elicitation',
      arguments: {},
      inputResponses: { [key]: { action: 'accept', content: { answer: 'Grace' } } },
      requestState: first.result?.requestState,
    });
    expect(retry.result).toMatchObject({ content: [{ type: 'text', text: 'elicited: accept Grace' }] });
    // A token continues its call once.
    const again = await call(daemon, { name: 'mcp_rich_ask_elicitation', arguments: {}, inputResponses: {}, requestState: first.result?.requestState });
    expect(again.error?.code).toBe(-32602);
  });
});

describe("a 2026-07-28 server's input_required through Switchboard", () => {
  it('reaches a 2026-07-28 agent as the server wrote it (keys and all), with the state sealed to the request', async () => {
    const daemon = await modernDaemon();
    const client = await agent(daemon, { pin: '2026-07-28' }, { elicitation: 'unused' });
    const Raw: StandardSchemaV1<unknown, Record<string, unknown>> = {
      '~standard': { version: 1, vendor: 't', validate: (value) => ({ value: value as Record<string, unknown> }) },
    };
    const first = await client.request({ method: 'tools/call', params: { name: 'mcp_rich_ask_elicitation', arguments: { message: 'Who?' } } }, Raw, { allowInputRequired: true });
    expect(first).toMatchObject({ resultType: 'input_required', inputRequests: { ask: { method: 'elicitation/create', params: { message: 'Who?' } } } });
    const state = String(first.requestState);
    // Sealed to this request: another tool cannot carry it back.
    const elsewhere = await client
      .request({ method: 'tools/call', params: { name: 'mcp_rich_ask_roots', arguments: {}, inputResponses: {}, requestState: state } }, Raw, { allowInputRequired: true })
      .catch((err: unknown) => err);
    expect((elsewhere as { code?: number }).code).toBe(-32602);
    const done = await client.request(
      {
        method: 'tools/call',
        params: {
          name: 'mcp_rich_ask_elicitation',
          arguments: { message: 'Who?' },
          inputResponses: { ask: { action: 'accept', content: { answer: 'Lin' } } },
          requestState: state,
        },
      },
      Raw,
      { allowInputRequired: true },
    );
    expect(done).toMatchObject({ content: [{ type: 'text', text: 'elicited: accept Lin' }] });
  });
});

describe('resource subscriptions through /mcp', () => {
  it('routes notifications/resources/updated to the session that subscribed, and only to it', async () => {
    const daemon = await stdioDaemon();
    const subscriber = await agent(daemon, 'legacy');
    const bystander = await agent(daemon, 'legacy');
    const updated = deferred<string>();
    const strays: string[] = [];
    subscriber.setNotificationHandler('notifications/resources/updated', (n) => updated.resolve(n.params.uri));
    bystander.setNotificationHandler('notifications/resources/updated', (n) => void strays.push(n.params.uri));
    await subscriber.subscribeResource({ uri: 'fixture://static/hello' });
    await bystander.callTool({ name: 'mcp_rich_touch', arguments: { uri: 'fixture://static/hello' } });
    expect(await updated.promise).toBe('fixture://static/hello');
    // The bystander's own call went out and came back after the update was relayed.
    await bystander.listTools();
    expect(strays).toEqual([]);
    await subscriber.unsubscribeResource({ uri: 'fixture://static/hello' });
  });

  /** Upstream unsubscribes through `/mcp` that `/metrics` counted: they took the request path. */
  const UNSUBSCRIBES = 'switchboard_upstream_requests_total{transport="mcp",server="rich",method="resources/unsubscribe",outcome="ok"}';

  it("unsubscribes a 2025-11-25 session's resources when the session ends, through the request path (#34 item 5)", async () => {
    const daemon = await stdioDaemon();
    const before = await metricValue(daemon, UNSUBSCRIBES);
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', daemon.url));
    const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    await client.connect(transport);
    onTestFinished(() => client.close());
    await client.subscribeResource({ uri: 'fixture://static/hello' });
    await client.subscribeResource({ uri: 'fixture://static/blob' });
    // The client ends its session (DELETE /mcp) without unsubscribing: the daemon does it for
    // it, each unsubscribe counted as the requests an agent sends are.
    await transport.terminateSession();
    await expect.poll(() => metricValue(daemon, UNSUBSCRIBES), { interval: 100, timeout: 10_000 }).toBe(before + 2);
  });

  it("unsubscribes a 2026-07-28 listen stream's resources when the stream closes, through the request path (#34 item 5)", async () => {
    const daemon = await stdioDaemon();
    const subscribes = UNSUBSCRIBES.replace('resources/unsubscribe', 'resources/subscribe');
    const before = await metricValue(daemon, UNSUBSCRIBES);
    const subscribedBefore = await metricValue(daemon, subscribes);
    const client = await agent(daemon, { pin: '2026-07-28' });
    const subscription = await client.listen({ resourceSubscriptions: ['fixture://static/hello'] });
    // The stream's URI is subscribed upstream in the background; once it is, the stream closes.
    await expect.poll(() => metricValue(daemon, subscribes), { interval: 100, timeout: 10_000 }).toBe(subscribedBefore + 1);
    await subscription.close();
    await expect.poll(() => metricValue(daemon, UNSUBSCRIBES), { interval: 100, timeout: 10_000 }).toBe(before + 1);
  });

  it("subscribes a 2026-07-28 client's listen stream to a 2026-07-28 server's resource", async () => {
    const daemon = await modernDaemon();
    const client = await agent(daemon, { pin: '2026-07-28' });
    const updated = deferred<string>();
    client.setNotificationHandler('notifications/resources/updated', (n) => updated.resolve(n.params.uri));
    const subscription = await client.listen({ resourceSubscriptions: ['fixture://static/hello'] });
    onTestFinished(() => subscription.close());
    // The upstream listen stream carrying the URI opens in the background; touch until it lands.
    const touching = setInterval(() => void client.callTool({ name: 'mcp_rich_touch', arguments: { uri: 'fixture://static/hello' } }).catch(() => undefined), 100);
    onTestFinished(() => clearInterval(touching));
    expect(await updated.promise).toBe('fixture://static/hello');
  });
});
