import { describe, expect, it } from 'vitest';
import type { OAuthKey, OAuthStore } from '../../../../src/store/ports.js';

/** A fresh, empty store; the factory registers its own cleanup. */
export type MakeOAuthStore = () => Promise<OAuthStore>;

const A = 'https://as-a.example';
const B = 'https://as-b.example';
const KEY: OAuthKey = { server: 'remote', authHash: 'h1' };
/** The same server after an edit to its OAuth settings. */
const EDITED: OAuthKey = { server: 'remote', authHash: 'h2' };
const OTHER: OAuthKey = { server: 'other', authHash: 'h1' };

/** The `OAuthStore` port's contract (store/ports.ts), for every backend. */
export function describeOAuthContract(name: string, make: MakeOAuthStore): void {
  describe(`OAuthStore contract: ${name}`, () => {
    it('keeps client registrations per server, settings hash and issuer', async () => {
      const store = await make();
      await store.putClient(KEY, A, { client_id: 'at-a' }, 'registered', 1);
      await store.putClient(KEY, B, { client_id: 'at-b' }, 'configured', 2);
      await store.putClient(EDITED, A, { client_id: 'edited' }, 'registered', 3);
      expect(await store.getClient(KEY, A)).toEqual({ info: { client_id: 'at-a' }, origin: 'registered' });
      expect(await store.getClient(OTHER, A)).toBeUndefined();
      expect((await store.clientsOf(KEY)).sort((x, y) => x.issuer.localeCompare(y.issuer))).toEqual([
        { issuer: A, info: { client_id: 'at-a' }, origin: 'registered' },
        { issuer: B, info: { client_id: 'at-b' }, origin: 'configured' },
      ]);
      await store.putClient(KEY, A, { client_id: 'again' }, 'metadata-document', 4);
      expect(await store.getClient(KEY, A)).toEqual({ info: { client_id: 'again' }, origin: 'metadata-document' });
      await store.deleteClients(KEY);
      expect(await store.clientsOf(KEY)).toEqual([]);
      expect(await store.getClient(EDITED, A)).toBeDefined();
    });

    it('keeps tokens per issuer; the latest are the ones saved last', async () => {
      const store = await make();
      expect(await store.latestTokens(KEY)).toBeUndefined();
      await store.putTokens(KEY, A, { access_token: 'a1' }, 5000, 10);
      await store.putTokens(KEY, B, { access_token: 'b1' }, undefined, 20);
      expect(await store.getTokens(KEY, A)).toEqual({ issuer: A, tokens: { access_token: 'a1' }, expiresAt: 5000, savedAt: 10 });
      expect(await store.latestTokens(KEY)).toEqual({ issuer: B, tokens: { access_token: 'b1' }, expiresAt: undefined, savedAt: 20 });
      await store.putTokens(KEY, A, { access_token: 'a2' }, 6000, 30);
      expect((await store.latestTokens(KEY))?.tokens).toEqual({ access_token: 'a2' });
      await store.deleteTokens(KEY, A);
      expect(await store.getTokens(KEY, A)).toBeUndefined();
      expect((await store.latestTokens(KEY))?.issuer).toBe(B);
      await store.putTokens(EDITED, A, { access_token: 'e' }, undefined, 40);
      await store.deleteAllTokens(KEY);
      expect(await store.latestTokens(KEY)).toBeUndefined();
      expect(await store.latestTokens(EDITED)).toBeDefined();
    });

    it('keeps discovery state and resource URL, each written without clearing the other', async () => {
      const store = await make();
      expect(await store.getDiscovery(KEY)).toEqual({ state: undefined, resourceUrl: undefined });
      await store.putDiscovery(KEY, { authorizationServerUrl: A }, 1);
      await store.putResourceUrl(KEY, 'https://mcp.example/mcp', 2);
      expect(await store.getDiscovery(KEY)).toEqual({ state: { authorizationServerUrl: A }, resourceUrl: 'https://mcp.example/mcp' });
      await store.putDiscovery(KEY, { authorizationServerUrl: B }, 3);
      expect(await store.getDiscovery(KEY)).toEqual({ state: { authorizationServerUrl: B }, resourceUrl: 'https://mcp.example/mcp' });
      await store.putDiscovery(KEY, undefined, 4);
      expect(await store.getDiscovery(KEY)).toEqual({ state: undefined, resourceUrl: 'https://mcp.example/mcp' });
      await store.deleteDiscovery(KEY);
      expect(await store.getDiscovery(KEY)).toEqual({ state: undefined, resourceUrl: undefined });
    });

    it('hands a pending sign-in out once, with its verifier, and never after it expired', async () => {
      const store = await make();
      await store.addPending('s1', KEY, 100, 200);
      await store.setVerifier('s1', 'verifier');
      const pending = { server: KEY.server, authHash: KEY.authHash, codeVerifier: 'verifier', expiresAt: 200 };
      expect(await store.peekPending('s1', 150)).toEqual(pending);
      expect(await store.peekPending('s1', 200)).toBeUndefined();
      const takes = await Promise.all([store.takePending('s1', 150), store.takePending('s1', 150)]);
      expect(takes.filter(Boolean)).toEqual([pending]);
      expect(await store.peekPending('s1', 150)).toBeUndefined();

      await store.addPending('s2', KEY, 100, 200);
      expect(await store.takePending('s2', 200)).toBeUndefined();
      // The expired one was taken out all the same.
      expect(await store.peekPending('s2', 0)).toBeUndefined();
    });

    it('drops expired pending sign-ins when another one starts', async () => {
      const store = await make();
      await store.addPending('old', KEY, 100, 200);
      await store.addPending('new', OTHER, 300, 400);
      expect(await store.peekPending('old', 0)).toBeUndefined();
      expect((await store.peekPending('new', 300))?.server).toBe(OTHER.server);
    });

    it('forgets a sign-in: tokens and pending sign-ins of every settings hash, nothing else', async () => {
      const store = await make();
      await store.putClient(KEY, A, { client_id: 'c' }, 'registered', 1);
      await store.putDiscovery(KEY, { authorizationServerUrl: A }, 1);
      await store.putTokens(KEY, A, { access_token: 'a' }, undefined, 1);
      await store.putTokens(EDITED, A, { access_token: 'e' }, undefined, 1);
      await store.putTokens(OTHER, A, { access_token: 'o' }, undefined, 1);
      await store.addPending('s1', KEY, 1, 1000);
      await store.forgetSignIn(KEY.server);
      expect(await store.latestTokens(KEY)).toBeUndefined();
      expect(await store.latestTokens(EDITED)).toBeUndefined();
      expect(await store.peekPending('s1', 1)).toBeUndefined();
      expect(await store.latestTokens(OTHER)).toBeDefined();
      expect(await store.getClient(KEY, A)).toBeDefined();
      expect((await store.getDiscovery(KEY)).state).toEqual({ authorizationServerUrl: A });
    });

    it('applies writes in the order they were called, awaited or not', async () => {
      const store = await make();
      const writes = [store.putTokens(KEY, A, { access_token: '1' }, undefined, 1), store.deleteAllTokens(KEY), store.putTokens(KEY, A, { access_token: '2' }, undefined, 2)];
      const read = store.latestTokens(KEY);
      await Promise.all(writes);
      expect((await read)?.tokens).toEqual({ access_token: '2' });
    });

    it('closes idempotently', async () => {
      const store = await make();
      await store.close();
      await expect(store.close()).resolves.toBeUndefined();
    });
  });
}
