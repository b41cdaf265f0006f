import { describe, expect, it } from 'vitest';
import { ERROR_META_KEY } from '../../src/upstream/catalogue/tool-bridge.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { openEvents, received } from '../helpers/events.js';
import { callTool, followSignIn, serverStatus, signIn, startOAuthFixture } from '../helpers/oauth.js';

/**
 * A bounded step-up (issue #29 item 3), against the oauth-http fixture: with STEP_UP=repeat its
 * `admin_echo` answers 403 insufficient_scope for "mcp admin" whatever the token holds; with
 * STEP_UP=ladder it asks for one more scope each time. Signing in again could never help, so
 * Switchboard must stop — `failed` with UPSTREAM_AUTH_FAILED — instead of asking a person forever.
 */

/** Follows the sign-in the server waits for (a step-up's), and waits for it to connect. */
async function signInAgain(sb: TestDaemon, server: string): Promise<string> {
  await serverStatus(sb, server, 'needs_auth');
  const { signIn: offer } = (await sb.json<{ signIn: { authorizationUrl: string } }>(`/servers/${server}`)).body;
  expect((await followSignIn(offer.authorizationUrl)).status).toBe(200);
  await serverStatus(sb, server, 'connected');
  return new URL(offer.authorizationUrl).searchParams.get('scope') ?? '';
}

describe('step-up', () => {
  it('a server that refuses the scope it was just granted: one step-up, then failed with UPSTREAM_AUTH_FAILED naming the scope', async () => {
    const fixture = await startOAuthFixture({ STEP_UP: 'repeat' });
    const sb = await startDaemon({ servers: { remote: { type: 'http', url: fixture.url } } });
    await signIn(sb, 'remote');
    const events = await openEvents(sb.url);

    const first = await callTool(sb, 'mcp_remote_admin_echo', { text: 'x' });
    expect(first._meta?.[ERROR_META_KEY]?.code).toBe('UPSTREAM_AUTH_REQUIRED');
    expect((await signInAgain(sb, 'remote')).split(' ').sort()).toEqual(['admin', 'mcp']);

    // Granted "mcp admin", refused "mcp admin": no third sign-in is offered.
    const second = await callTool(sb, 'mcp_remote_admin_echo', { text: 'x' });
    expect(second._meta?.[ERROR_META_KEY]?.code).toBe('UPSTREAM_AUTH_FAILED');
    const failed = await serverStatus(sb, 'remote', 'failed');
    expect(failed.lastError).toMatchObject({ code: 'UPSTREAM_AUTH_FAILED', message: expect.stringContaining('refused scope "mcp admin" again') });
    expect((await sb.json<{ signIn: unknown }>('/servers/remote')).body.signIn).toBeNull();
    const state = await fixture.state();
    expect(state.as.authorizeRequests).toBe(2);
    expect(state.forbidden).toBe(2);
    const statuses = received(events).flatMap((e) => (e.type === 'server.status' ? [(e as { status: string }).status] : []));
    expect(statuses.filter((s) => s === 'needs_auth')).toHaveLength(1);
    expect(statuses.at(-1)).toBe('failed');
    const feed = JSON.stringify(received(events));
    for (const secret of await fixture.secrets()) expect(feed.includes(secret), 'the /events feed holds a secret').toBe(false);

    // A person may still insist: `login` starts a new run, and the server connects again.
    const login = await sb.json<{ authorizationUrl: string }>('/servers/remote/login', { method: 'POST' });
    expect((await followSignIn(login.body.authorizationUrl)).status).toBe(200);
    await serverStatus(sb, 'remote', 'connected');
  });

  it('a server that asks for more scope every time: at most 3 authorizations in a row, then failed with UPSTREAM_AUTH_FAILED', async () => {
    const fixture = await startOAuthFixture({ STEP_UP: 'ladder' });
    const sb = await startDaemon({ servers: { remote: { type: 'http', url: fixture.url } } });
    await signIn(sb, 'remote');
    for (const step of ['step1', 'step2']) {
      expect((await callTool(sb, 'mcp_remote_admin_echo', { text: 'x' }))._meta?.[ERROR_META_KEY]?.code).toBe('UPSTREAM_AUTH_REQUIRED');
      expect((await signInAgain(sb, 'remote')).split(' ')).toContain(step);
    }
    expect((await callTool(sb, 'mcp_remote_admin_echo', { text: 'x' }))._meta?.[ERROR_META_KEY]?.code).toBe('UPSTREAM_AUTH_FAILED');
    const failed = await serverStatus(sb, 'remote', 'failed');
    expect(failed.lastError?.message).toContain('asked for more scope (now "');
    expect(failed.lastError?.message).toContain('step3');
    expect((await fixture.state()).as.authorizeRequests).toBe(3);
  });
});
