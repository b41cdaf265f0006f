import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { deferred } from '../../src/util/deferred.js';
import { startDaemon } from '../helpers/daemon.js';
import { closed, openEvents } from '../helpers/events.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';

/*
 * The shutdown drain waits for requests that end by themselves, never for the streams that only
 * end when the daemon closes them: a 2025-era /mcp session's GET stream, a 2026-07-28
 * `subscriptions/listen` and the /events WebSocket. (The drain against a real `serve` process is
 * in shutdown.test.ts.)
 */

const MODERN = '2026-07-28';
/** Longer than the test's own timeout: a close that waited out the grace fails the test. */
const GRACE_BEYOND_TEST_MS = 600_000;

describe('the shutdown drain', () => {
  it('does not wait out the grace for an open /mcp GET stream or /events WebSocket', async () => {
    const sb = await startDaemon({ servers: { echo: fixtureServerConfig('echo-stdio') }, config: { shutdownGraceMs: GRACE_BEYOND_TEST_MS } });
    const streamOpen = deferred();
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', sb.url), {
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        if (init?.method === 'GET' && res.ok) streamOpen.resolve();
        return res;
      },
    });
    const client = new Client({ name: 'drain-test', version: '1.0.0' });
    await client.connect(transport);
    onTestFinished(() => client.close());
    await streamOpen.promise;
    const ws = await openEvents(sb.url);

    // Nothing was in flight: close resolves without waiting for the grace to pass.
    await sb.daemon.close();
    expect((await closed(ws)).code).toBeGreaterThan(1000);
  });

  it('does not wait out the grace for a 2026-07-28 subscriptions/listen stream', async () => {
    const sb = await startDaemon({ servers: { echo: fixtureServerConfig('echo-stdio') }, config: { shutdownGraceMs: GRACE_BEYOND_TEST_MS } });
    const client = new Client({ name: 'drain-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', sb.url)));
    onTestFinished(() => client.close());
    const subscription = await client.listen({ toolsListChanged: true });
    onTestFinished(() => subscription.close());

    await expect(sb.daemon.close()).resolves.toBeUndefined();
  });
});
