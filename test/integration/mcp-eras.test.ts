import { Client, StreamableHTTPClientTransport, type StandardSchemaV1 } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { deferred } from '../../src/util/deferred.js';
import { type TestDaemon, startEchoDaemon } from '../helpers/daemon.js';
import { sharedByTests } from '../helpers/shared.js';

/**
 * Issue #13 item 2: `/mcp` serves both protocol eras on one URL, against a real daemon with a
 * real upstream, and real v2 SDK clients as the agents (plus raw HTTP for the revision's refusals).
 */

const MODERN = '2026-07-28';

/** Accepts any result as is, so a test sees every field the daemon sent (hints, `_meta`). */
const Raw: StandardSchemaV1<unknown, Record<string, unknown>> = {
  '~standard': { version: 1, vendor: 'test', validate: (value) => ({ value: value as Record<string, unknown> }) },
};

async function connect(daemon: TestDaemon, mode: 'legacy' | 'auto' | { pin: string }) {
  const client = new Client({ name: 'era-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', daemon.url));
  await client.connect(transport);
  onTestFinished(() => client.close());
  const changed = { next: deferred() };
  client.setNotificationHandler('notifications/tools/list_changed', () => changed.next.resolve());
  return { client, transport, changed };
}

const envelope = (version = MODERN) => ({
  'io.modelcontextprotocol/protocolVersion': version,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
});

async function rawPost(daemon: TestDaemon, headers: Record<string, string>, body: unknown) {
  const res = await fetch(new URL('/mcp', daemon.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: JSON.parse(await res.text()) as { error?: { code: number; data?: Record<string, unknown> } } };
}

/** The echo daemon of the tests that do not reload it. */
const echoDaemon = sharedByTests(
  () => startEchoDaemon({ lifetime: 'manual' }),
  (d) => d.close(),
);

describe('/mcp in both protocol eras', () => {
  it('serves a client pinned to 2026-07-28: discover, list with hints, call, and list_changed on subscriptions/listen', async () => {
    const daemon = await startEchoDaemon();
    const { client, transport, changed } = await connect(daemon, { pin: MODERN });
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect(transport.sessionId).toBeUndefined();
    expect(client.getDiscoverResult()).toMatchObject({ supportedVersions: [MODERN], capabilities: { tools: { listChanged: true } } });

    const list = await client.request({ method: 'tools/list', params: {} }, Raw);
    expect((list.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(['mcp_echo_add', 'mcp_echo_echo', 'mcp_echo_reverse']);
    // The upstream (2025-era) gives no hint: ours, and public (the list is the same for every caller).
    expect(list).toMatchObject({ ttlMs: 10_000, cacheScope: 'public' });
    expect(await client.callTool({ name: 'mcp_echo_echo', arguments: { text: 'modern' } })).toMatchObject({
      content: [{ type: 'text', text: 'modern' }],
    });

    const subscription = await client.listen({ toolsListChanged: true });
    onTestFinished(() => subscription.close());
    expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true });
    expect((await daemon.json('/servers/echo/reload', { method: 'POST' })).status).toBe(200);
    await changed.next.promise;
  });

  it('lands a client in auto mode on the 2026-07-28 era', async () => {
    const daemon = await echoDaemon();
    const { client } = await connect(daemon, 'auto');
    expect(client.getProtocolEra()).toBe('modern');
    expect(await client.callTool({ name: 'mcp_echo_reverse', arguments: { text: 'ab' } })).toMatchObject({ content: [{ text: 'ba' }] });
  });

  it('keeps serving a 2025-11-25 client as before: initialize, a session, the GET stream, list_changed', async () => {
    const daemon = await startEchoDaemon();
    const { client, transport, changed } = await connect(daemon, 'legacy');
    expect(client.getProtocolEra()).toBe('legacy');
    expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    expect(transport.sessionId).toEqual(expect.any(String));
    const list = await client.request({ method: 'tools/list', params: {} }, Raw);
    expect(list.ttlMs).toBeUndefined();
    expect(await client.callTool({ name: 'mcp_echo_echo', arguments: { text: 'legacy' } })).toMatchObject({ content: [{ text: 'legacy' }] });
    expect((await daemon.json('/servers/echo/reload', { method: 'POST' })).status).toBe(200);
    await changed.next.promise;
  });

  it('answers header mismatches with -32020 and an unknown revision with -32022 naming the supported one', async () => {
    const daemon = await echoDaemon();
    const mismatch = await rawPost(
      daemon,
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call' },
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } },
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error?.code).toBe(-32020);

    const missingName = await rawPost(
      daemon,
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'mcp_echo_echo', arguments: { text: 'x' }, _meta: envelope() } },
    );
    expect(missingName.status).toBe(400);
    expect(missingName.body.error?.code).toBe(-32020);

    const unsupported = await rawPost(
      daemon,
      { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: envelope('2099-01-01') } },
    );
    expect(unsupported.status).toBe(400);
    expect(unsupported.body.error?.code).toBe(-32022);
    expect(unsupported.body.error?.data).toMatchObject({ supported: [MODERN], requested: '2099-01-01' });

    // A well-formed modern request to the same URL is answered.
    const ok = await rawPost(
      daemon,
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'mcp_echo_echo' },
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'mcp_echo_echo', arguments: { text: 'raw' }, _meta: envelope() } },
    );
    expect(ok.status).toBe(200);
  });
});
