import { describe, expect, it } from 'vitest';
import { nextDaemonEvent, type TestDaemon } from '../helpers/daemon.js';
import { startReplica } from '../helpers/in-process-replica.js';
import { serverStatus, startOAuthFixture, type OAuthFixture, whoami } from '../helpers/oauth.js';
import { freshDatabaseUrl } from '../helpers/pg-stores.js';
import { rawRequest } from '../helpers/raw-http.js';

/**
 * Issue #43 item 3: sign-in through any replica. With `publicUrl` (the balancer's address) every
 * replica registers and names the same redirect URI, so a client registered dynamically through
 * one replica serves all of them, and the browser may come back through any; pending sign-ins
 * and registrations are in the shared store. A logout on one replica is relayed to the others.
 */

/** The balancer's address: nothing listens there in this test; the browser's redirect is sent on to a replica by hand. */
const PUBLIC_URL = 'https://switchboard.example.test/sb';

function replica(fixture: OAuthFixture, url: string): Promise<TestDaemon> {
  return startReplica(url, {
    servers: { remote: { type: 'http', url: fixture.url } },
    config: { publicUrl: PUBLIC_URL, health: { enabled: true, pingIntervalMs: 0 } },
  });
}

describe('OAuth sign-in through any replica (publicUrl)', () => {
  it('a sign-in started on A with a dynamically registered client completes through B, connects all three; a logout on C drops it everywhere', async () => {
    const fixture = await startOAuthFixture({ DCR: '1' });
    const url = await freshDatabaseUrl();
    const [a, b, c] = [await replica(fixture, url), await replica(fixture, url), await replica(fixture, url)];
    for (const sb of [a, b, c]) await serverStatus(sb, 'remote', 'needs_auth');

    const login = await a.json<{ authorizationUrl: string }>('/servers/remote/login', { method: 'POST' });
    expect(login.status).toBe(200);
    // The client registered on A names the balancer's callback, not A's own address.
    const authorization = new URL(login.body.authorizationUrl);
    expect(authorization.searchParams.get('redirect_uri')).toBe(`${PUBLIC_URL}/oauth/callback`);

    // The browser: the authorization server approves and redirects to the balancer, which sends it to B.
    const approval = await fetch(authorization, { redirect: 'manual' });
    await approval.text();
    const location = new URL(approval.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe(`${PUBLIC_URL}/oauth/callback`);
    // nginx passes the browser's Host on: the balancer's name is accepted, another is not.
    const callbackOnB = new URL(`/oauth/callback${location.search}`, b.url).href;
    const foreign = await rawRequest(callbackOnB, { headers: { host: 'elsewhere.example.test' } });
    expect(foreign.body).toContain('FORBIDDEN_HOST');
    const callback = await rawRequest(callbackOnB, { headers: { host: location.host } });
    expect(callback.status, callback.body).toBe(200);

    for (const sb of [a, b, c]) await serverStatus(sb, 'remote', 'connected');
    const seen = await Promise.all([whoami(a), whoami(b), whoami(c)]);
    const { as } = await fixture.state();
    // One registration and one code grant serve the three replicas.
    expect(as).toMatchObject({ registrations: 1, codeGrants: 1 });
    expect(new Set(seen.map((who) => who.clientId)).size).toBe(1);

    // Logout on C: announced to A and B (each drops its own sign-in state), and every replica
    // reconnects without tokens and waits for a sign-in again.
    const cId = (await c.json<{ replicas: Array<{ id: string; self: boolean }> }>('/status')).body.replicas.find((r) => r.self)?.id;
    const relayed = [a, b].map((sb) => nextDaemonEvent(sb.daemon, 'oauth.signed_out', (event) => event.server === 'remote'));
    const logout = await c.json('/servers/remote/logout', { method: 'POST' });
    expect(logout.status).toBe(200);
    for (const event of await Promise.all(relayed)) expect(event).toMatchObject({ type: 'oauth.signed_out', server: 'remote', replica: cId });
    for (const sb of [a, b, c]) await serverStatus(sb, 'remote', 'needs_auth');
    expect((await fixture.state()).as.revocations).toBeGreaterThan(0);
  });

  it('refuses a publicUrl that is not an http(s) URL', async () => {
    const { DaemonConfigSchema } = await import('../../src/config/schema.js');
    expect(DaemonConfigSchema.safeParse({ publicUrl: 'ftp://balancer.example' }).success).toBe(false);
    expect(DaemonConfigSchema.safeParse({ publicUrl: 'https://balancer.example/?x=1' }).success).toBe(false);
    expect(DaemonConfigSchema.safeParse({ publicUrl: 'https://balancer.example/sb/' }).success).toBe(true);
  });
});
