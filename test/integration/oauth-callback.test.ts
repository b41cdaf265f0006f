import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startDaemon } from '../helpers/daemon.js';
import { openEvents, received } from '../helpers/events.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { authHeaders, callTool, serverStatus, signIn, startOAuthFixture } from '../helpers/oauth.js';
import { rawRequest } from '../helpers/raw-http.js';
import { sharedWithCleanup, startAhead } from '../helpers/shared.js';

/** `/oauth/callback` and where tokens may go (issue #16 items 4, 5 and 7). */

const TOKEN = 'switchboard-agent-token';

interface Detail {
  signIn: { authorizationUrl: string } | null;
}

/** Follows the authorization URL to the authorization server's redirect, without landing on the daemon. */
async function approve(authorizationUrl: string): Promise<string> {
  const approval = await fetch(authorizationUrl, { redirect: 'manual' });
  await approval.text();
  const location = approval.headers.get('location');
  if (!location) throw new Error(`no redirect (HTTP ${approval.status})`);
  return location;
}

// Each test has a daemon and OAuth fixtures of its own (its sign-ins change them), all started at
// once before the first test: one after another, each test's worker sat idle while they started.
const forStates = sharedWithCleanup(async (cleanup) => {
  const clock = new ManualClock();
  const fixture = await startOAuthFixture({}, cleanup);
  const sb = await startDaemon({
    servers: { remote: { type: 'http', url: fixture.url } },
    config: { token: TOKEN, health: { enabled: true, pingIntervalMs: 0 } },
    deps: { clock },
    lifetime: 'manual',
  });
  cleanup(() => sb.close());
  return { clock, fixture, sb };
});
const forRefusal = sharedWithCleanup(async (cleanup) => {
  const fixture = await startOAuthFixture({}, cleanup);
  const sb = await startDaemon({ servers: { remote: { type: 'http', url: fixture.url } }, config: { token: TOKEN }, lifetime: 'manual' });
  cleanup(() => sb.close());
  return { fixture, sb };
});
const forTwoIssuers = sharedWithCleanup(async (cleanup) => {
  const [a, b] = await Promise.all([startOAuthFixture({}, cleanup), startOAuthFixture({}, cleanup)]);
  const sb = await startDaemon({
    servers: { alpha: { type: 'http', url: a.url }, beta: { type: 'http', url: b.url } },
    config: { token: TOKEN },
    lifetime: 'manual',
  });
  cleanup(() => sb.close());
  return { a, b, sb };
});
beforeAll(() => startAhead(forStates, forRefusal, forTwoIssuers));

describe('GET /oauth/callback', () => {
  it('refuses an unknown, a replayed and an expired state; needs no bearer token, but the Host check still applies', async () => {
    const { clock, fixture, sb } = await forStates();
    await serverStatus(sb, 'remote', 'needs_auth');
    const refuse = async (url: string): Promise<{ status: number; code: string }> => {
      const res = await fetch(url);
      const body = (await res.json()) as { error: { code: string } };
      return { status: res.status, code: body.error.code };
    };

    expect(await refuse(`${sb.url}/oauth/callback?state=made-up&code=made-up`)).toEqual({ status: 400, code: 'OAUTH_STATE_INVALID' });
    expect(await refuse(`${sb.url}/oauth/callback?code=no-state`)).toEqual({ status: 400, code: 'OAUTH_STATE_INVALID' });
    // Every other route still wants the token.
    expect((await fetch(`${sb.url}/servers/remote`)).status).toBe(401);

    const { signIn: offer } = (await sb.json<Detail>('/servers/remote')).body;
    const callback = await approve(offer!.authorizationUrl);
    const rebound = await rawRequest(callback, { headers: { host: 'evil.example' } });
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body)).toMatchObject({ error: { code: 'FORBIDDEN_HOST' } });

    // The browser comes back without the token: the state alone lets it in, once.
    const landed = await fetch(callback);
    expect(landed.status).toBe(200);
    await serverStatus(sb, 'remote', 'connected');
    expect(await refuse(callback)).toEqual({ status: 400, code: 'OAUTH_STATE_INVALID' });

    // A sign-in left for longer than ten minutes has expired.
    expect((await sb.json('/servers/remote/logout', { method: 'POST' })).status).toBe(200);
    await serverStatus(sb, 'remote', 'needs_auth');
    const late = await approve((await sb.json<Detail>('/servers/remote')).body.signIn!.authorizationUrl);
    clock.advance(11 * 60_000);
    expect(await refuse(late)).toEqual({ status: 400, code: 'OAUTH_STATE_INVALID' });
    expect((await sb.json<{ status: string }>('/servers/remote')).body.status).toBe('needs_auth');
    expect((await fixture.state()).as.codeGrants).toBe(1);
  });
});

describe('GET /oauth/callback when the sign-in did not complete', () => {
  it('answers 502 UPSTREAM_AUTH_FAILED for a refused authorization, echoing only its error code; the server keeps waiting', async () => {
    const { fixture, sb } = await forRefusal();
    await serverStatus(sb, 'remote', 'needs_auth');
    const { signIn: offer } = (await sb.json<Detail>('/servers/remote')).body;
    // The person said no: the authorization server sends the browser back with an error, no code.
    const refused = new URL(await approve(offer!.authorizationUrl));
    refused.searchParams.delete('code');
    refused.searchParams.set('error', 'access_denied');
    refused.searchParams.set('error_description', '<script>not echoed</script>');

    const res = await fetch(refused);
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error).toEqual({ code: 'UPSTREAM_AUTH_FAILED', message: expect.stringContaining('did not complete ("access_denied")') });
    expect(body.error.message).not.toContain('script');
    expect((await sb.json<{ status: string }>('/servers/remote')).body.status).toBe('needs_auth');
    expect((await fixture.state()).as.codeGrants).toBe(0);
  });
});

describe('tokens stay with their upstream', () => {
  it('two servers on two issuers keep registrations and tokens apart; agents never see them, and their own token never goes upstream', async () => {
    const { a, b, sb } = await forTwoIssuers();
    // The /events feed an operator's dashboard reads is scanned too (issue #29 item 5).
    const events = await openEvents(sb.url, { token: TOKEN });
    await signIn(sb, 'alpha');
    await signIn(sb, 'beta');
    const [stateA, stateB] = await Promise.all([a.state(), b.state()]);
    // Each authorization server registered its own client and never saw the other's client id.
    expect(stateA.clients).toHaveLength(1);
    expect(stateB.clients).toHaveLength(1);
    expect(stateA.clients[0]).not.toBe(stateB.clients[0]);
    expect(stateA.as.foreignClientIds).toEqual([]);
    expect(stateB.as.foreignClientIds).toEqual([]);

    // An agent over /mcp, with its own token to Switchboard.
    const agent = new Client({ name: 'agent', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${sb.url}/mcp`), { requestInit: { headers: authHeaders(sb) } });
    await agent.connect(transport);
    onTestFinished(() => agent.close());
    const answers = [
      await agent.listTools(),
      await agent.callTool({ name: 'mcp_alpha_whoami', arguments: {} }),
      await agent.callTool({ name: 'mcp_beta_whoami', arguments: {} }),
      await callTool(sb, 'mcp_alpha_echo', { text: 'rest' }),
      (await sb.json('/tools')).body,
    ];
    const whoA = JSON.parse((answers[1] as { content: Array<{ text: string }> }).content[0]!.text) as { clientId: string };
    expect(whoA.clientId).toBe(stateA.clients[0]);

    const [secretsA, secretsB] = await Promise.all([a.secrets(), b.secrets()]);
    const seenA = (await a.state()).authorizationHeaders;
    const seenB = (await b.state()).authorizationHeaders;
    // Each upstream got bearer tokens its own authorization server issued, and nothing else.
    for (const [seen, own] of [
      [seenA, secretsA],
      [seenB, secretsB],
    ] as const) {
      expect(seen.length).toBeGreaterThan(0);
      for (const header of seen) expect(own).toContain(header.replace(/^Bearer /, ''));
      expect(seen.join('\n')).not.toContain(TOKEN);
    }
    const toAgents = JSON.stringify(answers);
    const feed = JSON.stringify(received(events));
    expect(feed).toContain('"status":"connected"');
    for (const secret of [...secretsA, ...secretsB]) {
      expect(toAgents).not.toContain(secret);
      expect(feed, 'the /events feed holds a secret').not.toContain(secret);
    }
  });
});
