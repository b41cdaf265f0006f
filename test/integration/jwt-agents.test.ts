import { SignJWT, base64url } from 'jose';
import { describe, expect, it } from 'vitest';
import { sharedByTests } from '../helpers/shared.js';
import { AGENT_ERAS, OPERATOR_TOKEN, addAgentKey, agentClient, sharedTwoRichUpstreams, startTwoRichServers } from '../helpers/agents.js';
import type { JsonInit, TestDaemon } from '../helpers/daemon.js';
import { closed, nextEvent, openEvents } from '../helpers/events.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { TEST_AUDIENCE, TEST_ISSUER, newSigningKey, startJwksServer, type JwksServer } from '../helpers/jwks-server.js';

/**
 * Issue #40 item 4: agents signed in by their identity provider's JWT. A real JWKS server on
 * 127.0.0.1 (test/helpers/jwks-server.ts), tokens signed in the test, the real daemon with two
 * rich fixtures (`alpha`, `beta`). The token's `sub` names the agent, `sb_servers` and
 * `sb_access` give its view; the config agent `ci-bot` adds its own (narrower) tools.
 */

interface Listed {
  name: string;
  server: string;
  annotations?: { readOnlyHint?: boolean };
}

function jwtConfig(jwks: JwksServer): Record<string, unknown> {
  return {
    agentAuth: { jwt: { issuer: TEST_ISSUER, audiences: ['other-service', TEST_AUDIENCE], jwksUrl: jwks.url, agent: 'sub', view: { servers: 'sb_servers', access: 'sb_access' } } },
    agents: { 'ci-bot': { tools: ['mcp_*_structured', 'mcp_*_media'] } },
  };
}

/** `d.json` with `token` as the bearer instead of the operator's. */
function as<T = unknown>(d: TestDaemon, token: string, path: string, init: JsonInit = {}): Promise<{ status: number; body: T; headers: Headers }> {
  return d.json<T>(path, { ...init, headers: { authorization: `Bearer ${token}` } });
}

/**
 * Tokens and views are what these tests are about, not stdio: the rich servers are HTTP fixtures
 * shared by the file, a session per daemon.
 */
const upstreams = sharedTwoRichUpstreams();
const twoRich = async (config: Record<string, unknown>, options: Parameters<typeof startTwoRichServers>[2] = {}): Promise<TestDaemon> =>
  startTwoRichServers('test', config, { ...options, upstreams: await upstreams() });

/**
 * One JWKS server and daemon for the tests that only sign in and read (their agents and tokens are
 * their own); with request logging at trace, so that the bad-token test checks every line the
 * others made too. Tests that count JWKS fetches, rotate keys or move the clock start their own.
 */
const signedIn = sharedByTests(
  async () => {
    // RS256 here, the tests' other JWKS servers ES256: both families verify.
    const jwks = await startJwksServer({ lifetime: 'manual', alg: 'RS256' });
    const d = await startTwoRichServers('manual', { ...jwtConfig(jwks), requestLogging: true }, { captureLogs: 'trace', upstreams: await upstreams() }).catch(
      async (err: unknown) => {
        await jwks.close();
        throw err;
      },
    );
    return { jwks, d };
  },
  async ({ jwks, d }) => {
    await d.close();
    await jwks.close();
  },
);

const names = (items: Array<{ name: string }>): string[] => items.map((item) => item.name).sort();
const now = (): number => Math.floor(Date.now() / 1000);

describe('agents signed in by JWT', () => {
  it("a valid token's agent sees its claim-derived view over REST, /mcp in both eras and the feed; keys keep working beside it", async () => {
    const { jwks, d } = await signedIn();
    const all = (await d.json<{ tools: Listed[] }>('/tools')).body.tools;
    const token = await jwks.sign({ sub: 'reporter', sb_servers: ['alpha'] });

    const rest = await as<{ tools: Listed[] }>(d, token, '/tools');
    expect(rest.status).toBe(200);
    const alphaOnly = names(all.filter((tool) => tool.server === 'alpha'));
    expect(alphaOnly.length).toBeGreaterThan(0);
    expect(names(rest.body.tools)).toEqual(alphaOnly);
    for (const [, era] of AGENT_ERAS) {
      const client = await agentClient(d, token, era);
      expect(names((await client.listTools()).tools)).toEqual(alphaOnly);
      const called = await client.callTool({ name: 'mcp_alpha_structured', arguments: {} });
      expect(called.isError).not.toBe(true);
    }
    // Outside the view answers like an unknown name; inside, the call runs.
    expect((await as<{ error: { code: string } }>(d, token, '/tools/mcp_beta_structured/call', { method: 'POST', body: { arguments: {} } })).body.error.code).toBe(
      'TOOL_NOT_FOUND',
    );
    expect((await as(d, token, '/tools/mcp_alpha_structured/call', { method: 'POST', body: { arguments: {} } })).status).toBe(200);
    const status = await as<{ agent: string; servers: Array<{ name: string }> }>(d, token, '/status');
    expect({ agent: status.body.agent, servers: status.body.servers.map((s) => s.name) }).toEqual({ agent: 'reporter', servers: ['alpha'] });
    // Operator routes stay the operator's.
    expect((await as<{ error: { code: string } }>(d, token, '/agents')).body.error.code).toBe('FORBIDDEN');

    const feed = await openEvents(d.url, { token });
    const hello = await nextEvent(feed, 'hello');
    expect((hello as { servers: Array<{ name: string }> }).servers.map((s) => s.name)).toEqual(['alpha']);

    // An `sbk_` key works beside JWTs, on REST and /mcp.
    const key = await addAgentKey(d, { name: 'keyed', servers: ['beta'] });
    expect(names((await as<{ tools: Listed[] }>(d, key, '/tools')).body.tools)).toEqual(names(all.filter((tool) => tool.server === 'beta')));
    expect(names((await (await agentClient(d, key)).listTools()).tools)).toEqual(names(all.filter((tool) => tool.server === 'beta')));
    expect((await as(d, OPERATOR_TOKEN, '/agents')).status).toBe(200);
  });

  it("a config agent of the token's name narrows its view, and a claimed access tier applies", async () => {
    const { jwks, d } = await signedIn();
    // A space-separated claim, as OAuth's `scope` is; `read` keeps only read-only tools; the config agent keeps structured and media.
    const token = await jwks.sign({ sub: 'ci-bot', sb_servers: 'alpha beta', sb_access: 'read' });
    const rest = await as<{ tools: Listed[] }>(d, token, '/tools');
    expect(names(rest.body.tools)).toEqual(['mcp_alpha_structured', 'mcp_beta_structured']);
    const client = await agentClient(d, token);
    expect(names((await client.listTools()).tools)).toEqual(['mcp_alpha_structured', 'mcp_beta_structured']);
    // A mapped claim the token lacks gives nothing.
    const bare = await jwks.sign({ sub: 'bare' });
    expect((await as<{ tools: Listed[] }>(d, bare, '/tools')).body.tools).toEqual([]);
  });

  it('each bad token class answers 401 with its own code, and nothing of a token is logged', async () => {
    const { jwks, d } = await signedIn();
    const other = await newSigningKey(jwks.current.alg);
    const t = now();
    const kid = jwks.current.kid;
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    const unsignedClaims = base64url.encode(JSON.stringify({ iss: TEST_ISSUER, aud: TEST_AUDIENCE, sub: 'reporter', exp: t + 600 }));
    const cases: Array<[string, string]> = [
      ['JWT_EXPIRED', await jwks.sign({ sub: 'reporter', iat: t - 7200, exp: t - 3600 })],
      ['JWT_NOT_YET_VALID', await jwks.sign({ sub: 'reporter', nbf: t + 3600 })],
      ['JWT_NOT_YET_VALID', await jwks.sign({ sub: 'reporter', iat: t + 3600, exp: t + 7200 })],
      ['JWT_ISSUER_INVALID', await jwks.sign({ sub: 'reporter', iss: 'https://elsewhere.example' })],
      ['JWT_AUDIENCE_INVALID', await jwks.sign({ sub: 'reporter', aud: 'not-switchboard' })],
      ['JWT_KEY_UNKNOWN', await jwks.sign({ sub: 'reporter' }, { kid: 'no-such-kid' })],
      ['JWT_SIGNATURE_INVALID', await jwks.sign({ sub: 'reporter' }, { key: other, kid })],
      ['JWT_ALGORITHM_REFUSED', `${header}.${unsignedClaims}.`],
      [
        'JWT_ALGORITHM_REFUSED',
        // HS256 keyed with the provider's public key: the classic confusion attack.
        await new SignJWT({ iss: TEST_ISSUER, aud: TEST_AUDIENCE, sub: 'reporter', exp: t + 600 })
          .setProtectedHeader({ alg: 'HS256', kid })
          .sign(new TextEncoder().encode(jwks.current.publicPem)),
      ],
      ['JWT_AGENT_INVALID', await jwks.sign({ sub: 'system:serviceaccount:ci:runner' })],
      ['JWT_AGENT_INVALID', await jwks.sign({ sub: undefined })],
      ['JWT_MALFORMED', await jwks.sign({ sub: 'reporter', exp: undefined })],
      ['JWT_MALFORMED', `${base64url.encode('{"alg": RS256')}.e30.c2ln`],
    ];
    for (const [code, token] of cases) {
      for (const path of ['/tools', '/mcp']) {
        const res = await as<{ error: { code: string } }>(d, token, path, path === '/mcp' ? { method: 'POST', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } } : {});
        expect({ path, code: res.body.error.code, status: res.status }).toEqual({ path, code, status: 401 });
        expect(res.headers.get('www-authenticate')).toBe('Bearer');
      }
    }
    // A refused token on the feed, where it may come as ?token=, is not logged either.
    const [, expired] = cases[0] as [string, string];
    expect((await fetch(`${d.url}/events?token=${expired}`)).status).toBe(401);
    const logs = d.logs.text();
    for (const [, token] of cases) {
      expect(logs).not.toContain(token);
      expect(logs).not.toContain(token.split('.')[2] || token);
    }
  });

  it('a token signed with a new key (new kid) works after one JWKS refresh', async () => {
    const jwks = await startJwksServer();
    const d = await twoRich(jwtConfig(jwks));
    expect((await as(d, await jwks.sign({ sub: 'reporter', sb_servers: ['alpha'] }), '/tools')).status).toBe(200);
    expect(jwks.fetches).toBe(1);
    await jwks.rotate();
    const rotated = await jwks.sign({ sub: 'reporter', sb_servers: ['alpha'] });
    expect((await as(d, rotated, '/tools')).status).toBe(200);
    expect(jwks.fetches).toBe(2);
    // The new key is kept: further tokens need no fetch.
    expect((await as(d, await jwks.sign({ sub: 'other', sb_servers: ['beta'] }), '/tools')).status).toBe(200);
    expect(jwks.fetches).toBe(2);
  });

  it('1000 tokens with made-up kids cost at most two JWKS fetches', async () => {
    const jwks = await startJwksServer();
    const d = await twoRich(jwtConfig(jwks));
    const codes = new Map<string, number>();
    for (let batch = 0; batch < 20; batch += 1) {
      const tokens = await Promise.all(Array.from({ length: 50 }, (_, i) => jwks.sign({ sub: 'reporter' }, { kid: `made-up-${batch}-${i}` })));
      const answers = await Promise.all(tokens.map((token) => as<{ error: { code: string } }>(d, token, '/tools')));
      for (const answer of answers) codes.set(answer.body.error.code, (codes.get(answer.body.error.code) ?? 0) + 1);
    }
    expect(Object.fromEntries(codes)).toEqual({ JWT_KEY_UNKNOWN: 1000 });
    // The first token's fetch, and one refresh for an unknown kid; then the cooldown holds.
    expect(jwks.fetches).toBeLessThanOrEqual(2);
    expect((await as(d, await jwks.sign({ sub: 'reporter' }), '/tools')).status).toBe(200);
  });

  it("once a token's exp passes, its requests answer JWT_EXPIRED and its /events feed closes (manual clock)", async () => {
    const jwks = await startJwksServer();
    const clock = new ManualClock(Date.now());
    const d = await twoRich(jwtConfig(jwks), { deps: { clock } });
    const token = await jwks.sign({ sub: 'reporter', sb_servers: ['alpha'], exp: Math.floor(clock.now() / 1000) + 60 });
    expect((await as(d, token, '/tools')).status).toBe(200);
    const feed = await openEvents(d.url, { token });
    await nextEvent(feed, 'hello');

    clock.advance(60_000 + 30_000 + 1_000); // exp and the 30 s tolerance
    expect((await as<{ error: { code: string } }>(d, token, '/tools')).body.error.code).toBe('JWT_EXPIRED');
    // Any event makes the feed check its caller.
    await addAgentKey(d, { name: 'someone' });
    expect((await closed(feed)).code).toBe(4401);
  });
});
