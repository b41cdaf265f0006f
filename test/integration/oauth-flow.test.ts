import { describe, expect, it } from 'vitest';
import { startDaemon } from '../helpers/daemon.js';
import { followSignIn, startOAuthFixture } from '../helpers/oauth.js';
import { waitForStatus } from '../helpers/status-watch.js';

interface Status {
  servers: Array<{ name: string; status: string; toolCount: number; deferred: boolean; lastError: { code: string; message: string } | null }>;
  serverCounts: Record<string, number>;
}

describe('OAuth upstream: first connect, sign-in', () => {
  it('waits in needs_auth, then signs in over HTTP and serves live tools', async () => {
    const fixture = await startOAuthFixture();
    const sb = await startDaemon({ servers: { remote: { type: 'http', url: fixture.url } } });

    const waiting = await waitForStatus<Status>(sb.url, (s) => s.servers[0]?.status === 'needs_auth');
    expect(waiting.serverCounts.needs_auth).toBe(1);
    expect(waiting.servers[0]?.lastError?.code).toBe('UPSTREAM_AUTH_REQUIRED');

    const detail = await sb.json<{ signIn: { authorizationUrl: string } | null }>('/servers/remote');
    expect(detail.body.signIn?.authorizationUrl).toMatch(new RegExp(`^${fixture.origin}/authorize\\?`));

    const login = await sb.json<{ authorizationUrl: string }>('/servers/remote/login', { method: 'POST' });
    expect(login.status).toBe(200);
    const callback = await followSignIn(login.body.authorizationUrl);
    expect(callback.status).toBe(200);

    await waitForStatus<Status>(sb.url, (s) => s.servers[0]?.status === 'connected');
    const call = await sb.json<{ content: Array<{ text: string }> }>('/tools/mcp_remote_echo/call', { method: 'POST', body: { arguments: { text: 'hi' } } });
    expect(call.body.content[0]?.text).toBe('hi');
  });
});
