import { Client, StreamableHTTPClientTransport, type StandardSchemaV1 } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { ServerConfig } from '../../src/config/types.js';
import { SUBSCRIBE_WAIT_MS } from '../../src/upstream/transport/modern-listen.js';
import { deferred } from '../../src/util/deferred.js';
import { MEDIA } from '../fixtures/servers/lib/rich-server.js';
import { textOf } from '../helpers/connect.js';
import { modernToolCall } from '../helpers/mcp-client.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig, startFixtureHttp, type FixtureHttp } from '../helpers/fixtures.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { sharedByTests } from '../helpers/shared.js';

/**
 * Issue #21: an agent of either era loses nothing to an upstream of either era — every content
 * item, `resultType` as the agent's era wants it, log levels and log messages, completions,
 * resource subscriptions — over real daemons, real fixture servers and real SDK clients.
 */

type Mode = 'legacy' | { pin: string };
const CLIENTS: Array<[string, Mode]> = [
  ['2025-11-25', 'legacy'],
  ['2026-07-28', { pin: '2026-07-28' }],
];

/**
 * Each upstream kind behind one daemon, shared by the tests of this file: every test opens its own
 * agent session, and what a test changes (a log level, a subscription) belongs to that session.
 */
const UPSTREAMS: Array<[string, () => Promise<TestDaemon>]> = [
  ['a 2025-era stdio server', sharedByTests(() => daemonOf(fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy' } })), closeAll)],
  ['a 2026-07-28 HTTP server', sharedByTests(() => daemonOfModernHttp({}), closeAll)],
  ['a 2026-07-28 HTTP server that leaves resultType out', sharedByTests(() => daemonOfModernHttp({ OMIT_RESULT_TYPE: '1' }), closeAll)],
  ['a 2026-07-28 HTTP server that declares no completions, logging or subscribe', sharedByTests(() => daemonOfModernHttp({ UNDECLARED: '1' }), closeAll)],
];

/** What a shared daemon holds beyond itself: the HTTP fixture it aggregates, if any. */
const upstreamOf = new WeakMap<TestDaemon, FixtureHttp>();

async function daemonOf(rich: ServerConfig): Promise<TestDaemon> {
  return startDaemon({ servers: { rich }, lifetime: 'manual' });
}

async function daemonOfModernHttp(env: Record<string, string>): Promise<TestDaemon> {
  const http = await startFixtureHttp('rich-http', { env: { ERA: 'modern', ...env } });
  const daemon = await daemonOf({ type: 'http', url: http.url }).catch(async (err: unknown) => {
    await http.close();
    throw err;
  });
  upstreamOf.set(daemon, http);
  return daemon;
}

async function closeAll(daemon: TestDaemon): Promise<void> {
  await daemon.close();
  await upstreamOf.get(daemon)?.close();
}

async function modernHttp(env: Record<string, string>): Promise<ServerConfig> {
  const http = await startFixtureHttp('rich-http', { env: { ERA: 'modern', ...env } });
  onTestFinished(() => http.close());
  return { type: 'http', url: http.url };
}

const Raw: StandardSchemaV1<unknown, Record<string, unknown>> = {
  '~standard': { version: 1, vendor: 'test', validate: (value) => ({ value: value as Record<string, unknown> }) },
};

async function agent(daemon: TestDaemon, mode: Mode): Promise<Client> {
  const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', daemon.url)));
  onTestFinished(() => client.close());
  return client;
}

describe.each(CLIENTS)('a %s client', (_client, mode) => {
  const legacyClient = mode === 'legacy';
  describe.each(UPSTREAMS)('of %s', (_upstream, sharedDaemon) => {
    it('gets every content item intact, structuredContent, and resultType only in its own era', async () => {
      const daemon = await sharedDaemon();
      const client = await agent(daemon, mode);
      // The SDK client drops resultType as it decodes; the wire shows what was sent.
      const result = legacyClient
        ? await client.request({ method: 'tools/call', params: { name: 'mcp_rich_media', arguments: {} } }, Raw)
        : ((await modernToolCall(daemon.url, { name: 'mcp_rich_media', arguments: {} })).result ?? {});
      expect(result.content).toEqual(MEDIA);
      expect(result.structuredContent).toEqual({ kinds: MEDIA.length });
      expect(result.isError).toBeUndefined();
      if (legacyClient) expect(result).not.toHaveProperty('resultType');
      else expect(result.resultType).toBe('complete');
    });

    it('is offered completions and gets them from the owning server', async () => {
      const daemon = await sharedDaemon();
      const client = await agent(daemon, mode);
      const capabilities = legacyClient ? client.getServerCapabilities() : client.getDiscoverResult()?.capabilities;
      expect(capabilities?.completions).toEqual({});
      const answer = await client.complete({ ref: { type: 'ref/prompt', name: 'mcp_rich_greet' }, argument: { name: 'name', value: 'al' } });
      expect(answer.completion.values).toEqual(['alice', 'albert']);
    });
  });
});

describe('a 2025-11-25 session of a 2026-07-28 server whose listen stream the SDK cannot read', () => {
  it('has its subscribe and unsubscribe answered within moments, not at the listen ack timeout', async () => {
    // The wait for the listen stream runs on the daemon's clock: moved past it here, not slept through (issue #34).
    const clock = new ManualClock();
    const daemon = await startDaemon({ servers: { rich: await modernHttp({ LISTEN_NDJSON: '1' }) }, deps: { clock } });
    const client = await agent(daemon, 'legacy');
    const answeredOnceTheWaitIsOver = async (request: Promise<unknown>): Promise<unknown> => {
      await expect.poll(() => clock.pendingDelays(), { interval: 50, timeout: 10_000 }).toContain(SUBSCRIBE_WAIT_MS);
      clock.advance(SUBSCRIBE_WAIT_MS);
      return request;
    };
    expect(await answeredOnceTheWaitIsOver(client.subscribeResource({ uri: 'fixture://static/hello' }))).toEqual({});
    expect(await answeredOnceTheWaitIsOver(client.unsubscribeResource({ uri: 'fixture://static/hello' }))).toEqual({});
  });
});

describe.each(UPSTREAMS)('a 2025-11-25 session of %s', (_upstream, sharedDaemon) => {
  it('is offered logging; its level decides which of the server\u2019s log messages it sees', async () => {
    const daemon = await sharedDaemon();
    const client = await agent(daemon, 'legacy');
    expect(client.getServerCapabilities()?.logging).toEqual({});
    const messages: unknown[] = [];
    client.setNotificationHandler('notifications/message', (n) => void messages.push(n.params.data));
    await client.setLoggingLevel('warning');
    // A 2025 server got logging/setLevel; a 2026-07-28 one gets the level with each request.
    expect(textOf(await client.callTool({ name: 'mcp_rich_get_log_level', arguments: {} }))).toBe('warning');
    await client.callTool({ name: 'mcp_rich_log', arguments: { level: 'info', text: 'too quiet' } });
    await client.callTool({ name: 'mcp_rich_log', arguments: { level: 'error', text: 'loud' } });
    expect(messages).toEqual(['loud']);
  });

  it('subscribes and unsubscribes a resource, and gets its updates', async () => {
    const daemon = await sharedDaemon();
    const client = await agent(daemon, 'legacy');
    expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true);
    const updated = deferred<string>();
    client.setNotificationHandler('notifications/resources/updated', (n) => updated.resolve(n.params.uri));
    await client.subscribeResource({ uri: 'fixture://static/hello' });
    // A modern server's listen stream may open a moment after the subscribe answered; touch until it lands.
    const touching = setInterval(() => void client.callTool({ name: 'mcp_rich_touch', arguments: { uri: 'fixture://static/hello' } }).catch(() => undefined), 100);
    onTestFinished(() => clearInterval(touching));
    expect(await updated.promise).toBe('fixture://static/hello');
    clearInterval(touching);
    await client.unsubscribeResource({ uri: 'fixture://static/hello' });
  });
});
