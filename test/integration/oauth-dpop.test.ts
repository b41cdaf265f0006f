import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startDaemon } from '../helpers/daemon.js';
import { openEvents, received } from '../helpers/events.js';
import { serverStatus, signIn, startOAuthFixture, whoami } from '../helpers/oauth.js';
import { tempDir } from '../helpers/process.js';

/**
 * Sender-constrained tokens (RFC 9449, issue #29 item 2) against the oauth-http fixture with
 * DPOP=1 and DPOP_NONCE=1: its authorization server advertises DPoP, binds each token to the key
 * of the token request's proof and first demands a nonce; its MCP endpoint takes a bound token
 * only with the `DPoP` scheme and a fresh proof from that key, and demands a nonce too.
 */

interface DpopState {
  sessions: number;
  authorizationHeaders: string[];
  as: { codeGrants: number; refreshGrants: number };
  dpop: { asNonceChallenges: number; rsNonceChallenges: number; boundTokens: number; proofsAccepted: number; refused: number };
}

describe('DPoP', () => {
  it('proves possession with one key per upstream, retries both nonce challenges, refreshes bound tokens, and keeps the key across a restart', async () => {
    const fixture = await startOAuthFixture({ DPOP: '1', DPOP_NONCE: '1' });
    const state = async (): Promise<DpopState> => (await fixture.state()) as unknown as DpopState;
    const dbPath = join(await tempDir(), 'switchboard.db');
    const first = await startDaemon({ servers: { remote: { type: 'http', url: fixture.url } }, config: { dbPath }, captureLogs: 'trace' });
    const events = await openEvents(first.url);
    await signIn(first, 'remote');
    expect((await whoami(first)).seq).toBe(1);
    const signedIn = await state();
    expect(signedIn.dpop).toMatchObject({ asNonceChallenges: 1, rsNonceChallenges: 1, boundTokens: 1, refused: 0 });
    expect(signedIn.dpop.proofsAccepted).toBeGreaterThan(2);
    // Never a bound token as a Bearer one.
    expect(signedIn.authorizationHeaders.every((header) => header.startsWith('DPoP '))).toBe(true);

    // The server stops taking the token: the refresh carries a proof from the same key, and so does the retry.
    await fixture.expireAccessTokens();
    expect((await whoami(first)).seq).toBe(2);
    expect((await state()).as.refreshGrants).toBe(1);
    expect((await state()).dpop).toMatchObject({ boundTokens: 2, refused: 0 });
    const outputs = { logs: first.logs.text(), events: JSON.stringify(received(events)), status: await (await first.fetch('/status')).text() };
    for (const secret of await fixture.secrets()) {
      for (const [where, text] of Object.entries(outputs)) expect(text.includes(secret), `${where} holds a secret`).toBe(false);
    }
    await first.close();

    // A restart finds the key in the store with the tokens bound to it: no new sign-in, no refusal.
    const second = await startDaemon({ servers: { remote: { type: 'http', url: fixture.url } }, config: { dbPath } });
    await serverStatus(second, 'remote', 'connected');
    expect((await whoami(second)).seq).toBe(2);
    expect(await state()).toMatchObject({ as: { codeGrants: 1 }, dpop: { refused: 0 } });
  });

  it('client credentials get DPoP-bound tokens too, with nobody signing in', async () => {
    const fixture = await startOAuthFixture({ DPOP: '1', DPOP_NONCE: '1', DCR: '0', CLIENTS: 'svc:dpop-client-secret-1' });
    const sb = await startDaemon({
      servers: { remote: { type: 'http', url: fixture.url, oauth: { grant: 'client_credentials', clientId: 'svc', clientSecret: 'dpop-client-secret-1' } } },
    });
    await serverStatus(sb, 'remote', 'connected');
    expect((await whoami(sb)).seq).toBe(1);
    const seen = (await fixture.state()) as unknown as DpopState;
    expect(seen.dpop).toMatchObject({ asNonceChallenges: 1, rsNonceChallenges: 1, boundTokens: 1, refused: 0 });
    expect(seen.authorizationHeaders.every((header) => header.startsWith('DPoP '))).toBe(true);
  });
});
