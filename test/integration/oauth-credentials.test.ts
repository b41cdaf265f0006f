import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverMCPServers } from '../../src/config/discover.js';
import { ERROR_META_KEY } from '../../src/upstream/catalogue/tool-bridge.js';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { callTool, followSignIn, serverStatus, signIn, startOAuthFixture, whoami } from '../helpers/oauth.js';
import { tempDir } from '../helpers/process.js';

/**
 * How Switchboard gets a client id and which scopes it asks for (issue #16 item 5), and the
 * static credentials that take precedence over signing in (item 6).
 */

const CLIENT_ID = 'switchboard-preregistered';
const CLIENT_SECRET = 'preregistered-secret';
const CIMD_URL = 'https://switchboard.example/oauth/client-metadata.json';
const STATIC = 'static-bearer-token';

describe('client registration', () => {
  it('uses a client registered beforehand, from our config or a Gemini settings file, without dynamic registration', async () => {
    const env = { DCR: '0', CLIENTS: `${CLIENT_ID}:${CLIENT_SECRET}` };
    // Two servers: discovery would take one URL in two files for one server (the other shadowed).
    const [fixture, other] = await Promise.all([startOAuthFixture(env), startOAuthFixture(env)]);
    const dir = await tempDir();
    await mkdir(join(dir, '.gemini'));
    await writeFile(
      join(dir, '.gemini', 'settings.json'),
      JSON.stringify({ mcpServers: { gemini: { httpUrl: fixture.url, oauth: { enabled: true, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: ['mcp'] } } } }),
    );
    // Our own file keeps the secret in a variable.
    const configPath = join(dir, 'switchboard.json');
    const ours = { type: 'http', url: other.url, oauth: { clientId: CLIENT_ID, clientSecret: '${SB_TEST_SECRET}' } };
    await writeFile(configPath, JSON.stringify({ mcpServers: { ours } }));
    const sb = await startDaemon({
      discover: () => discoverMCPServers({ cwd: dir, home: dir, env: { SB_TEST_SECRET: CLIENT_SECRET }, configPath }),
    });
    await signIn(sb, 'gemini');
    await signIn(sb, 'ours');
    expect((await whoami(sb, 'gemini')).clientId).toBe(CLIENT_ID);
    expect((await whoami(sb, 'ours')).clientId).toBe(CLIENT_ID);
    for (const state of await Promise.all([fixture.state(), other.state()])) {
      expect(state.as.registrations).toBe(0);
      expect(state.as.foreignClientIds).toEqual([]);
      // A confidential client authenticates at the token endpoint with its secret.
      expect(state.as.tokenAuthMethods).toEqual(['client_secret_basic']);
    }
  });

  it('uses its Client ID Metadata Document URL as client id where the authorization server supports it', async () => {
    const fixture = await startOAuthFixture({ DCR: '0', CIMD: '1' });
    const sb = await startDaemon({ servers: { doc: { type: 'http', url: fixture.url, oauth: { clientMetadataUrl: CIMD_URL } } } });
    await signIn(sb, 'doc');
    expect((await whoami(sb, 'doc')).clientId).toBe(CIMD_URL);
    expect((await fixture.state()).as).toMatchObject({ registrations: 0, tokenAuthMethods: ['none'] });
  });
});

describe('scopes', () => {
  it('asks for the challenge scope, adds configured ones, and steps up when a 403 insufficient_scope wants more', async () => {
    const fixture = await startOAuthFixture({ CHALLENGE_SCOPE: 'mcp' });
    const sb = await startDaemon({
      servers: {
        plain: { type: 'http', url: fixture.url },
        wide: { type: 'http', url: fixture.url, oauth: { scopes: ['admin'] } },
      },
    });
    await signIn(sb, 'plain');
    await signIn(sb, 'wide');
    expect((await fixture.state()).as.requestedScopes).toEqual(['mcp', 'admin mcp']);
    expect((await whoami(sb, 'wide')).scopes).toEqual(['admin', 'mcp']);
    expect((await callTool(sb, 'mcp_wide_admin_echo', { text: 'allowed' })).content[0]?.text).toBe('allowed');

    // `plain` holds `mcp` only: the server answers 403 insufficient_scope and a new sign-in,
    // for the union of what was granted and what is wanted, is what it takes.
    const refused = await callTool(sb, 'mcp_plain_admin_echo', { text: 'more' });
    expect(refused._meta?.[ERROR_META_KEY]?.code).toBe('UPSTREAM_AUTH_REQUIRED');
    await serverStatus(sb, 'plain', 'needs_auth');
    const { signIn: offer } = (await sb.json<{ signIn: { authorizationUrl: string } }>('/servers/plain')).body;
    expect(new URL(offer.authorizationUrl).searchParams.get('scope')?.split(' ').sort()).toEqual(['admin', 'mcp']);
    expect((await followSignIn(offer.authorizationUrl)).status).toBe(200);
    await serverStatus(sb, 'plain', 'connected');
    expect((await callTool(sb, 'mcp_plain_admin_echo', { text: 'more' })).content[0]?.text).toBe('more');
    expect((await fixture.state()).forbidden).toBe(1);
  });
});

describe('static credentials', () => {
  it('an Authorization header, written or from a !cmd, wins over signing in; a refused one fails the connect as before', async () => {
    const fixture = await startOAuthFixture({ STATIC_TOKEN: STATIC });
    const sb = await startDaemon({
      servers: {
        written: { type: 'http', url: fixture.url, headers: { Authorization: `Bearer ${STATIC}` } },
        command: { type: 'http', url: fixture.url, headers: { authorization: `!printf 'Bearer %s' ${STATIC}` } },
        wrong: { type: 'http', url: fixture.url, headers: { Authorization: 'Bearer not-it' } },
      },
    });
    await serverStatus(sb, 'written', 'connected');
    await serverStatus(sb, 'command', 'connected');
    expect(JSON.parse((await callTool(sb, 'mcp_command_whoami')).content[0]!.text)).toMatchObject({ clientId: 'static' });
    // No sign-in and no fallback to SSE for the refused one: a plain connect failure.
    const wrong = await serverStatus(sb, 'wrong', 'failed');
    expect(wrong.lastError).toMatchObject({ code: 'UPSTREAM_CONNECT_FAILED', message: expect.stringContaining('401') });
    expect(await fixture.state()).toMatchObject({ unauthorized: 1, sseAttempts: 0, as: { registrations: 0, authorizeRequests: 0 } });
    // A server with its own header has no sign-in to start.
    const login = await sb.json<{ error: { code: string } }>('/servers/written/login', { method: 'POST' });
    expect(login).toMatchObject({ status: 409, body: { error: { code: 'OAUTH_NOT_APPLICABLE' } } });
  });

  it('stored credentials (SPEC §3) come from the same store: a bearer header for http, OAUTH_ACCESS_TOKEN for stdio', async () => {
    const fixture = await startOAuthFixture({ STATIC_TOKEN: STATIC });
    const sb = await startDaemon({
      servers: { remote: { type: 'http', url: fixture.url }, local: fixtureServerConfig('introspect') },
      until: 'idle',
    });
    await sb.daemon.oauth.setStoredCredential('remote', STATIC);
    await sb.daemon.oauth.setStoredCredential('local', 'stdio-stored-token');
    await sb.daemon.start();
    await serverStatus(sb, 'remote', 'connected');
    expect(JSON.parse((await callTool(sb, 'mcp_local_env')).content[0]!.text)).toMatchObject({ OAUTH_ACCESS_TOKEN: 'stdio-stored-token' });
    expect(await fixture.state()).toMatchObject({ unauthorized: 0, authorizationHeaders: [`Bearer ${STATIC}`], as: { registrations: 0 } });

    // Forgotten, the credential no longer stands in the way: the next connect asks for a sign-in.
    await sb.daemon.oauth.deleteStoredCredential('remote');
    expect((await sb.json('/servers/remote/reload', { method: 'POST' })).status).toBe(200);
    await serverStatus(sb, 'remote', 'needs_auth');
  });
});
