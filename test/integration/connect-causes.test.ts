import { describe, expect, it, onTestFinished } from 'vitest';
import { startDaemon } from '../helpers/daemon.js';
import { startFixtureHttp } from '../helpers/fixtures.js';
import { serverStatus, startOAuthFixture } from '../helpers/oauth.js';

/**
 * Causes kept (issue #29 item 4): a failed connect reports what the server really answered, not
 * what a fallback met afterwards; the legacy SSE fallback is tried only on the statuses the
 * transport's backwards-compatibility rules name (400, 404, 405); and a sign-in whose redirect
 * lacks `iss` says so in words.
 */

async function goneServer(): Promise<{ url: string; state: () => Promise<{ posts: number; gets: number }> }> {
  const http = await startFixtureHttp('gone-then-bad-http');
  onTestFinished(() => http.close());
  return { url: http.url, state: async () => (await (await fetch(new URL('/admin/state', http.url))).json()) as { posts: number; gets: number } };
}

describe('the cause of a failed connect', () => {
  it('410 then 400, and the SSE fallback 404 too: lastError keeps the first answer, the fallback comes second', async () => {
    const gone = await goneServer();
    const sb = await startDaemon({ servers: { gone: { type: 'http', url: gone.url } } });
    const failed = await serverStatus(sb, 'gone', 'failed');
    expect(failed.lastError?.code).toBe('UPSTREAM_CONNECT_FAILED');
    expect(failed.lastError?.message).toMatch(/^Could not connect to MCP server "gone": the server answered HTTP 410 \(this endpoint is gone \(410 marker\)\)/);
    expect(failed.lastError?.message).toContain('the legacy SSE fallback failed too: SSE error: Non-200 status code (404)');
    // The probe got the 410, initialize the 400 (a fallback cue), and the fallback its one GET.
    expect(await gone.state()).toEqual({ posts: 2, gets: 1 });
  });

  it('410 on initialize is the answer, not a cue to try legacy SSE', async () => {
    const gone = await goneServer();
    const sb = await startDaemon({ servers: { gone: { type: 'http', url: gone.url, protocol: 'legacy' } } });
    const failed = await serverStatus(sb, 'gone', 'failed');
    expect(failed.lastError?.message).toContain('410 marker');
    expect(failed.lastError?.message).toContain('(HTTP 410)');
    expect(failed.lastError?.message).not.toContain('SSE');
    expect(await gone.state()).toEqual({ posts: 1, gets: 0 });
  });
});

describe('the cause of a failed sign-in', () => {
  it('a redirect without iss from an authorization server that promises one reads as such', async () => {
    const fixture = await startOAuthFixture();
    const sb = await startDaemon({ servers: { remote: { type: 'http', url: fixture.url } } });
    await serverStatus(sb, 'remote', 'needs_auth');
    const login = await sb.json<{ authorizationUrl: string }>('/servers/remote/login', { method: 'POST' });
    const approval = await fetch(login.body.authorizationUrl, { redirect: 'manual' });
    const back = new URL(approval.headers.get('location') ?? '');
    back.searchParams.delete('iss');
    const callback = await fetch(back);
    const body = (await callback.json()) as { error: { code: string; message: string } };
    expect(callback.status).toBe(502);
    expect(body.error.code).toBe('UPSTREAM_AUTH_FAILED');
    expect(body.error.message).toContain("the authorization server's redirect has no iss");
    expect(body.error.message).not.toContain('undefined');
  });
});
