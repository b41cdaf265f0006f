import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { ServerConfig } from '../../src/config/types.js';
import { startDaemon } from '../helpers/daemon.js';
import { openEvents, received } from '../helpers/events.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { outwardText, serverStatus, startOAuthFixture, type OAuthFixture, whoami } from '../helpers/oauth.js';
import { tempDir } from '../helpers/process.js';

/**
 * The unattended sign-in of issue #29 against real processes: the oauth-http fixture's
 * authorization server runs the `client_credentials` grant (secret by HTTP Basic or in the body,
 * or an RFC 7523 assertion checked against the client's public key); the daemon is real. Nobody
 * signs in, so `needs_auth` must never show.
 */

const SECRET = 'cc-secret-0123456789abcdef';
/** Pings off: one test moves a manual clock by an hour and counts every token request. */
const NO_PINGS = { health: { enabled: true, pingIntervalMs: 0 } };

function unattended(fixture: OAuthFixture, oauth: NonNullable<ServerConfig['oauth']>): ServerConfig {
  return { type: 'http', url: fixture.url, oauth: { grant: 'client_credentials', ...oauth } };
}

/** Every status the servers went through, from the daemon's own feed. */
function statusesOf(events: Awaited<ReturnType<typeof openEvents>>): string[] {
  return received(events).flatMap((e) => (e.type === 'server.status' ? [(e as { status: string }).status] : []));
}

describe('client credentials (no person)', () => {
  it('a secret from !cmd by HTTP Basic: connects without needs_auth, renews before expiry and after a 401, and no secret is in logs, /status, /servers, /tools, /metrics, /events or the console', async () => {
    const console: string[] = [];
    for (const method of ['log', 'info', 'warn', 'error'] as const) {
      vi.spyOn(globalThis.console, method).mockImplementation((...args: unknown[]) => void console.push(args.map(String).join(' ')));
    }
    const clock = new ManualClock();
    const fixture = await startOAuthFixture({ DCR: '0', CLIENTS: `svc:${SECRET}` });
    const sb = await startDaemon({
      servers: { m2m: unattended(fixture, { clientId: 'svc', clientSecret: `!printf %s ${SECRET}`, scopes: ['mcp'] }) },
      config: { ...NO_PINGS, requestLogging: true },
      captureLogs: 'trace',
      deps: { clock },
      until: 'idle',
    });
    const events = await openEvents(sb.url);
    await sb.daemon.start();

    expect(await serverStatus(sb, 'm2m', 'connected')).toMatchObject({ toolCount: 5, lastError: null });
    expect(await whoami(sb, 'm2m')).toMatchObject({ seq: 1, clientId: 'svc', scopes: ['mcp'] });
    const first = await fixture.state();
    expect(first.as).toMatchObject({ clientCredentialsGrants: 1, tokenAuthMethods: ['client_secret_basic'], authorizeRequests: 0, registrations: 0, resources: [fixture.url] });

    // Inside the token's last minute (it lives an hour): a new one before the request leaves.
    clock.advance(60 * 60_000 - 30_000);
    expect((await whoami(sb, 'm2m')).seq).toBe(2);
    expect(await fixture.state()).toMatchObject({ unauthorized: first.unauthorized, as: { clientCredentialsGrants: 2 } });
    // The server stops taking it: one 401, the grant again, the request again — same session.
    await fixture.expireAccessTokens();
    expect((await whoami(sb, 'm2m')).seq).toBe(3);
    expect(await fixture.state()).toMatchObject({ unauthorized: first.unauthorized + 1, sessions: 1, as: { clientCredentialsGrants: 3, refreshGrants: 0 } });

    // Nobody is asked to sign in: `login` has nothing to do, and no status but connecting/connected was seen.
    const login = await sb.json<{ error: { code: string } }>('/servers/m2m/login', { method: 'POST' });
    expect(login).toMatchObject({ status: 409, body: { error: { code: 'OAUTH_NOT_APPLICABLE' } } });
    expect(new Set(statusesOf(events))).toEqual(new Set(['connecting', 'connected']));

    const outputs = await outwardText(sb, events, console, ['/servers/m2m']);
    expect(outputs.logs).toContain('access token renewed');
    const secrets = [SECRET, ...(await fixture.secrets())];
    expect(secrets.length).toBeGreaterThan(3);
    for (const [where, text] of Object.entries(outputs)) {
      for (const secret of secrets) expect(text.includes(secret), `${where} holds a secret`).toBe(false);
    }
  });

  it('sends the secret in the body where the authorization server or the config says client_secret_post', async () => {
    const [postOnly, either] = await Promise.all([
      startOAuthFixture({ DCR: '0', CLIENTS: `svc:${SECRET}`, AUTH_METHODS: 'client_secret_post' }),
      startOAuthFixture({ DCR: '0', CLIENTS: `svc:${SECRET}` }),
    ]);
    const sb = await startDaemon({
      servers: {
        told: unattended(postOnly, { clientId: 'svc', clientSecret: SECRET }),
        chosen: unattended(either, { clientId: 'svc', clientSecret: SECRET, tokenEndpointAuthMethod: 'client_secret_post' }),
      },
    });
    await Promise.all([serverStatus(sb, 'told', 'connected'), serverStatus(sb, 'chosen', 'connected')]);
    expect((await whoami(sb, 'told')).clientId).toBe('svc');
    expect((await whoami(sb, 'chosen')).clientId).toBe('svc');
    for (const state of await Promise.all([postOnly.state(), either.state()])) {
      expect(state.as).toMatchObject({ clientCredentialsGrants: 1, tokenAuthMethods: ['client_secret_post'] });
    }
  });

  it('signs an RFC 7523 assertion with a private key from a file (EC) or from !cmd (RSA, PKCS#1); the key is never logged', async () => {
    const dir = await tempDir();
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const ecKey = ec.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const rsaKey = rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
    const paths = { ecKey: join(dir, 'ec.pem'), ecPub: join(dir, 'ec.pub'), rsaKey: join(dir, 'rsa.pem'), rsaPub: join(dir, 'rsa.pub') };
    await Promise.all([
      writeFile(paths.ecKey, ecKey, { mode: 0o600 }),
      writeFile(paths.rsaKey, rsaKey, { mode: 0o600 }),
      writeFile(paths.ecPub, ec.publicKey.export({ type: 'spki', format: 'pem' }) as string),
      writeFile(paths.rsaPub, rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string),
    ]);
    const fixture = await startOAuthFixture({ DCR: '0', JWT_CLIENTS: `svc-ec:${paths.ecPub},svc-rsa:${paths.rsaPub}` });
    const sb = await startDaemon({
      servers: {
        ec: unattended(fixture, { clientId: 'svc-ec', privateKeyJwt: paths.ecKey }),
        rsa: unattended(fixture, { clientId: 'svc-rsa', privateKeyJwt: `!cat ${paths.rsaKey}` }),
      },
      captureLogs: 'trace',
    });
    await Promise.all([serverStatus(sb, 'ec', 'connected'), serverStatus(sb, 'rsa', 'connected')]);
    expect((await whoami(sb, 'ec')).clientId).toBe('svc-ec');
    expect((await whoami(sb, 'rsa')).clientId).toBe('svc-rsa');
    expect((await fixture.state()).as).toMatchObject({ clientCredentialsGrants: 2, tokenAuthMethods: ['private_key_jwt', 'private_key_jwt'] });
    const logs = sb.logs.text();
    for (const pem of [ecKey, rsaKey]) {
      const body = pem.split('\n')[1] ?? '';
      expect(body.length).toBeGreaterThan(40);
      expect(logs).not.toContain(body);
    }
    for (const secret of await fixture.secrets()) expect(logs).not.toContain(secret);
  });

  it('credentials the authorization server refuses: failed with UPSTREAM_AUTH_FAILED, never needs_auth, the secret named nowhere', async () => {
    const fixture = await startOAuthFixture({ DCR: '0', CLIENTS: `svc:${SECRET}` });
    const wrong = 'not-the-secret-42';
    const sb = await startDaemon({ servers: { m2m: unattended(fixture, { clientId: 'svc', clientSecret: wrong }) }, until: 'idle' });
    const events = await openEvents(sb.url);
    await sb.daemon.start();
    const failed = await serverStatus(sb, 'm2m', 'failed');
    expect(failed.lastError?.code).toBe('UPSTREAM_AUTH_FAILED');
    expect(failed.lastError?.message).toContain('"m2m"');
    expect(statusesOf(events)).not.toContain('needs_auth');
    expect(JSON.stringify(received(events))).not.toContain(wrong);
    expect((await fixture.state()).as.authorizeRequests).toBe(0);
  });

  it('a workload identity token (JWT-bearer grant, RFC 7523 §2.1) read afresh from its file for every token request; the token is never logged', async () => {
    const dir = await tempDir();
    const platform = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const keyPath = join(dir, 'platform.pub');
    await writeFile(keyPath, platform.publicKey.export({ type: 'spki', format: 'pem' }) as string);
    const fixture = await startOAuthFixture({ DCR: '0', CLIENTS: 'wl:', WORKLOAD_KEY: keyPath });
    const tokenPath = join(dir, 'token');
    const tokens = [workloadToken(platform.privateKey, fixture.origin, 'one'), workloadToken(platform.privateKey, fixture.origin, 'two')];
    await writeFile(tokenPath, tokens[0]!);
    const sb = await startDaemon({
      servers: { wl: { type: 'http', url: fixture.url, oauth: { grant: 'jwt_bearer', clientId: 'wl', assertion: tokenPath } } },
      captureLogs: 'trace',
      until: 'idle',
    });
    const events = await openEvents(sb.url);
    await sb.daemon.start();
    await serverStatus(sb, 'wl', 'connected');
    expect(await whoami(sb, 'wl')).toMatchObject({ seq: 1, clientId: 'wl' });
    expect((await fixture.state()).as).toMatchObject({ workloads: ['ci-runner/one'], authorizeRequests: 0, tokenAuthMethods: ['none'] });

    // The platform rotated the token; the server stops taking the access token: the next grant uses the new one.
    await writeFile(tokenPath, tokens[1]!);
    await fixture.expireAccessTokens();
    expect((await whoami(sb, 'wl')).seq).toBe(2);
    expect((await fixture.state()).as).toMatchObject({ workloads: ['ci-runner/one', 'ci-runner/two'] });
    expect(statusesOf(events)).not.toContain('needs_auth');
    for (const text of [sb.logs.text(), JSON.stringify(received(events))]) for (const token of tokens) expect(text).not.toContain(token);
  });
});

/** A workload token as a platform (Kubernetes, a CI runner) issues it: ES256, for the authorization server. */
function workloadToken(key: KeyObject, audience: string, jti: string): string {
  const now = Math.floor(Date.now() / 1000);
  const part = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${part({ alg: 'ES256', typ: 'JWT' })}.${part({ iss: 'https://platform.example', sub: 'ci-runner', aud: audience, iat: now, exp: now + 600, jti })}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}
