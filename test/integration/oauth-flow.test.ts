import { TRIM_INTERVAL_MS } from '../../src/gateway/audit/audit-log.js';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ERROR_META_KEY } from '../../src/upstream/catalogue/tool-bridge.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { openEvents, received } from '../helpers/events.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { callTool, followSignIn, outwardText, serverStatus, signIn, startOAuthFixture, type OAuthFixture, whoami } from '../helpers/oauth.js';
import { tempDir } from '../helpers/process.js';

/**
 * OAuth upstreams against real processes (issue #16): the oauth-http fixture is an MCP server
 * with its own authorization server; the daemon is real and listens on 127.0.0.1; the test plays
 * the person with a browser by following the authorization URL itself.
 */

const TOOLS = ['mcp_remote_add', 'mcp_remote_admin_echo', 'mcp_remote_echo', 'mcp_remote_reverse', 'mcp_remote_whoami'];
/** Pings off: these tests move a manual clock by an hour and assert every request the fixture sees. */
const NO_PINGS = { health: { enabled: true, pingIntervalMs: 0 } };

interface Detail {
  status: string;
  attempt: number;
  nextRetryAt: string | null;
  restarts: number;
  connectedSince: string | null;
  transport: string;
  signIn: { authorizationUrl: string; expiresAt: string } | null;
}

async function daemonFor(fixture: OAuthFixture, options: Parameters<typeof startDaemon>[0] = {}): Promise<TestDaemon> {
  return startDaemon({ servers: { remote: { type: 'http', url: fixture.url } }, ...options });
}

describe('OAuth upstream: first connect and sign-in', () => {
  it('waits in needs_auth (no SSE fallback, no retries), then POST login and the browser round trip bring live tools', async () => {
    const clock = new ManualClock();
    const fixture = await startOAuthFixture();
    const sb = await daemonFor(fixture, { config: NO_PINGS, deps: { clock } });

    const waiting = await serverStatus(sb, 'remote', 'needs_auth');
    expect(waiting).toMatchObject({ transport: 'http', toolCount: 0, lastError: { code: 'UPSTREAM_AUTH_REQUIRED' } });
    expect(waiting.lastError?.message).toContain('switchboard login remote');
    const first = (await sb.json<Detail>('/servers/remote')).body;
    expect(first).toMatchObject({ status: 'needs_auth', attempt: 0, nextRetryAt: null });
    expect(first.signIn?.authorizationUrl).toMatch(new RegExp(`^${fixture.origin}/authorize\\?`));
    const afterConnect = await fixture.state();
    // A 401 started the authorization flow; it was never taken for a cue to try legacy SSE.
    expect(afterConnect).toMatchObject({ sseAttempts: 0, unauthorized: 1, as: { registrations: 1, authorizeRequests: 0 } });

    // Nothing is scheduled for the server (the audit log's retention trim is the only timer): an
    // hour later the server has not been asked again, and the sign-in offered at connect time has expired.
    expect(clock.pendingDelays()).toEqual([TRIM_INTERVAL_MS]);
    clock.advance(60 * 60_000);
    expect((await fixture.state()).unauthorized).toBe(1);
    const later = (await sb.json<Detail>('/servers/remote')).body;
    expect(later).toMatchObject({ status: 'needs_auth', signIn: null });

    const login = await sb.json<{ server: string; authorizationUrl: string; expiresAt: string }>('/servers/remote/login', { method: 'POST' });
    expect(login.status).toBe(200);
    expect(login.body.authorizationUrl).not.toBe(first.signIn?.authorizationUrl);
    const url = new URL(login.body.authorizationUrl);
    expect(url.searchParams.get('redirect_uri')).toBe(`${sb.url}/oauth/callback`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('resource')).toBe(fixture.url);
    // Asked twice, login hands out the sign-in already waiting rather than a second one.
    expect((await sb.json<{ authorizationUrl: string }>('/servers/remote/login', { method: 'POST' })).body.authorizationUrl).toBe(login.body.authorizationUrl);

    const callback = await followSignIn(login.body.authorizationUrl);
    expect(callback).toMatchObject({ status: 200, text: expect.stringContaining('Signed in to <strong>remote</strong>') });
    const connected = await serverStatus(sb, 'remote', 'connected');
    expect(connected).toMatchObject({ toolCount: 5, deferred: false, lastError: null });
    const tools = (await sb.json<{ tools: Array<{ name: string; deferred: boolean }> }>('/tools?server=remote')).body.tools;
    expect(tools.map((t) => t.name)).toEqual(TOOLS);
    expect(tools.every((t) => !t.deferred)).toBe(true);
    expect((await callTool(sb, 'mcp_remote_echo', { text: 'signed in' })).content[0]?.text).toBe('signed in');
    // One authorization (the one followed), bound to this server by its resource indicator (RFC 8707).
    expect((await fixture.state()).as).toMatchObject({ registrations: 1, authorizeRequests: 1, codeGrants: 1, resources: [fixture.url] });
  });
});

describe('OAuth upstream: tokens over time', () => {
  it('refreshes ahead of expiry and on a 401, with the same session and no status change', async () => {
    const clock = new ManualClock();
    const fixture = await startOAuthFixture();
    const sb = await daemonFor(fixture, { config: NO_PINGS, deps: { clock } });
    await signIn(sb, 'remote');
    const events = await openEvents(sb.url);
    const before = (await sb.json<Detail>('/servers/remote')).body;
    expect((await whoami(sb)).seq).toBe(1);
    const unauthorized = (await fixture.state()).unauthorized;

    // Inside the token's last minute (it lives an hour): refreshed before the request leaves.
    clock.advance(60 * 60_000 - 30_000);
    expect((await whoami(sb)).seq).toBe(2);
    expect(await fixture.state()).toMatchObject({ unauthorized, as: { refreshGrants: 1 } });

    // The server stops accepting the access token: one 401, a refresh, the request again.
    await fixture.expireAccessTokens();
    expect((await whoami(sb)).seq).toBe(3);
    expect(await fixture.state()).toMatchObject({ unauthorized: unauthorized + 1, sessions: 1, as: { refreshGrants: 2, codeGrants: 1 } });

    const after = (await sb.json<Detail>('/servers/remote')).body;
    expect(after).toMatchObject({ status: 'connected', restarts: 0, connectedSince: before.connectedSince });
    // Agents saw nothing about the server: the feed carried its hello and, besides the calls'
    // own audit events, nothing since.
    expect(
      received(events)
        .map((e) => e.type)
        .filter((type) => type !== 'call.finished'),
    ).toEqual(['hello']);
  });

  it('a rejected refresh token: needs_auth again, cached tools listed as deferred, calls answered at once; a new sign-in restores it', async () => {
    const fixture = await startOAuthFixture();
    const sb = await daemonFor(fixture);
    await signIn(sb, 'remote');
    await fixture.revokeAll();

    const refused = await callTool(sb, 'mcp_remote_echo', { text: 'x' });
    expect(refused).toMatchObject({ isError: true, _meta: { [ERROR_META_KEY]: { code: 'UPSTREAM_AUTH_REQUIRED' } } });
    expect(refused.content[0]?.text).toContain('switchboard login remote');
    await serverStatus(sb, 'remote', 'needs_auth');
    expect((await fixture.state()).as.rejectedRefreshes).toBe(1);

    const tools = (await sb.json<{ tools: Array<{ name: string; deferred: boolean }> }>('/tools?server=remote')).body.tools;
    expect(tools.map((t) => t.name)).toEqual(TOOLS);
    expect(tools.every((t) => t.deferred)).toBe(true);
    const before = await fixture.state();
    const again = await callTool(sb, 'mcp_remote_reverse', { text: 'ab' });
    // At once: not a TOOL_CALL_TIMEOUT after the call deadline, and no connect attempt (the fixture
    // and its authorization server saw no request for it).
    expect(again._meta?.[ERROR_META_KEY]?.code).toBe('UPSTREAM_AUTH_REQUIRED');
    expect(await fixture.state()).toEqual(before);

    const { signIn: offer } = (await sb.json<Detail>('/servers/remote')).body;
    expect(offer).not.toBeNull();
    expect((await followSignIn(offer!.authorizationUrl)).status).toBe(200);
    await serverStatus(sb, 'remote', 'connected');
    expect((await callTool(sb, 'mcp_remote_reverse', { text: 'ab' })).content[0]?.text).toBe('ba');
  });

  it('keeps sign-ins in a database only its user can read: a restart connects at once; logout revokes and asks again', async () => {
    const fixture = await startOAuthFixture();
    const dbPath = join(await tempDir(), 'state', 'switchboard.db');
    const first = await daemonFor(fixture, { config: { dbPath } });
    await signIn(first, 'remote');
    await first.close();
    expect((await stat(dbPath)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dbPath, '..'))).mode & 0o777).toBe(0o700);

    const second = await daemonFor(fixture, { config: { dbPath } });
    await serverStatus(second, 'remote', 'connected');
    expect((await fixture.state()).as).toMatchObject({ codeGrants: 1, authorizeRequests: 1 });

    const logout = await second.json<Detail>('/servers/remote/logout', { method: 'POST' });
    expect(logout.status).toBe(200);
    await serverStatus(second, 'remote', 'needs_auth');
    // Refresh and access token both taken back by the authorization server.
    expect((await fixture.state()).as.revocations).toBe(2);
    const refused = await callTool(second, 'mcp_remote_echo', { text: 'x' });
    expect(refused._meta?.[ERROR_META_KEY]?.code).toBe('UPSTREAM_AUTH_REQUIRED');
  });
});

describe('OAuth secrets', () => {
  it('after sign-in, refreshes, a rejection, a new sign-in and a logout, no token, code, verifier, secret or state is in logs, /status, events, metrics or the console', async () => {
    const console: string[] = [];
    for (const method of ['log', 'info', 'warn', 'error'] as const) {
      vi.spyOn(globalThis.console, method).mockImplementation((...args: unknown[]) => void console.push(args.map(String).join(' ')));
    }
    const clock = new ManualClock();
    const fixture = await startOAuthFixture();
    const sb = await daemonFor(fixture, {
      config: { ...NO_PINGS, requestLogging: true },
      captureLogs: 'trace',
      deps: { clock },
      until: 'idle',
    });
    const events = await openEvents(sb.url);
    await sb.daemon.start();
    const states: string[] = [];
    const follow = async (url: string): Promise<void> => {
      states.push(new URL(url).searchParams.get('state') ?? '');
      expect((await followSignIn(url)).status).toBe(200);
      await serverStatus(sb, 'remote', 'connected');
    };

    await serverStatus(sb, 'remote', 'needs_auth');
    await follow((await sb.json<{ authorizationUrl: string }>('/servers/remote/login', { method: 'POST' })).body.authorizationUrl);
    clock.advance(60 * 60_000);
    await whoami(sb);
    await fixture.expireAccessTokens();
    await whoami(sb);
    await fixture.revokeAll();
    await callTool(sb, 'mcp_remote_echo', { text: 'x' });
    await serverStatus(sb, 'remote', 'needs_auth');
    await follow((await sb.json<Detail>('/servers/remote')).body.signIn!.authorizationUrl);
    expect((await sb.json('/servers/remote/logout', { method: 'POST' })).status).toBe(200);
    await serverStatus(sb, 'remote', 'needs_auth');
    expect((await fixture.state()).as).toMatchObject({ codeGrants: 2, refreshGrants: 2, rejectedRefreshes: 1, revocations: 2 });

    const outputs = await outwardText(sb, events, console);
    expect(outputs.logs).toContain('signed in');
    expect(outputs.logs).toContain('/oauth/callback?code=****');
    expect(received(events).length).toBeGreaterThan(10);
    const secrets = await fixture.secrets();
    expect(secrets.length).toBeGreaterThan(10);
    for (const [where, text] of Object.entries(outputs)) {
      for (const secret of [...secrets, ...states]) expect(text.includes(secret), `${where} holds a secret`).toBe(false);
    }
  });
});
