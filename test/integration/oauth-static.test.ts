import { describe, expect, it } from 'vitest';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { callTool, serverStatus, startOAuthFixture } from '../helpers/oauth.js';

/** Static credentials keep working and take precedence over signing in (issue #16 item 6). */

const STATIC = 'static-bearer-token';

describe('static credentials', () => {
  it('an Authorization header, written or from a !cmd, wins: connected, no registration, no sign-in', async () => {
    const fixture = await startOAuthFixture({ STATIC_TOKEN: STATIC });
    const sb = await startDaemon({
      servers: {
        written: { type: 'http', url: fixture.url, headers: { Authorization: `Bearer ${STATIC}` } },
        command: { type: 'http', url: fixture.url, headers: { authorization: `!printf 'Bearer %s' ${STATIC}` } },
      },
    });
    await serverStatus(sb, 'written', 'connected');
    await serverStatus(sb, 'command', 'connected');
    expect(JSON.parse((await callTool(sb, 'mcp_command_whoami')).content[0]!.text)).toMatchObject({ clientId: 'static' });
    expect(await fixture.state()).toMatchObject({ unauthorized: 0, as: { registrations: 0, authorizeRequests: 0 } });
    // A server with its own header has no sign-in to start.
    const login = await sb.json<{ error: { code: string } }>('/servers/written/login', { method: 'POST' });
    expect(login).toMatchObject({ status: 409, body: { error: { code: 'OAUTH_NOT_APPLICABLE' } } });
  });

  it('a refused static header fails the connect like before: no sign-in, no fallback to SSE', async () => {
    const fixture = await startOAuthFixture({ STATIC_TOKEN: STATIC });
    const sb = await startDaemon({ servers: { wrong: { type: 'http', url: fixture.url, headers: { Authorization: 'Bearer not-it' } } } });
    const row = await serverStatus(sb, 'wrong', 'failed');
    expect(row.lastError).toMatchObject({ code: 'UPSTREAM_CONNECT_FAILED', message: expect.stringContaining('401') });
    expect(await fixture.state()).toMatchObject({ sseAttempts: 0, as: { registrations: 0 } });
  });

  it('stored credentials (SPEC §3) come from the same store: a bearer header for http, OAUTH_ACCESS_TOKEN for stdio', async () => {
    const fixture = await startOAuthFixture({ STATIC_TOKEN: STATIC });
    const sb = await startDaemon({
      servers: { remote: { type: 'http', url: fixture.url }, local: fixtureServerConfig('introspect') },
      until: 'idle',
    });
    sb.daemon.oauth.setStoredCredential('remote', STATIC);
    sb.daemon.oauth.setStoredCredential('local', 'stdio-stored-token');
    await sb.daemon.start();
    await serverStatus(sb, 'remote', 'connected');
    expect(JSON.parse((await callTool(sb, 'mcp_local_env')).content[0]!.text)).toMatchObject({ OAUTH_ACCESS_TOKEN: 'stdio-stored-token' });
    expect(await fixture.state()).toMatchObject({ unauthorized: 0, authorizationHeaders: [`Bearer ${STATIC}`], as: { registrations: 0 } });

    // Forgotten, the credential no longer stands in the way: the next connect asks for a sign-in.
    sb.daemon.oauth.deleteStoredCredential('remote');
    expect((await sb.json('/servers/remote/reload', { method: 'POST' })).status).toBe(200);
    await serverStatus(sb, 'remote', 'needs_auth');
  });
});
