import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { authHashOf } from '../../../../src/upstream/oauth/auth-hash.js';
import { callbackUrlOf } from '../../../../src/upstream/oauth/broker.js';
import { hashState, refreshDue, SIGN_IN_TTL_MS, UpstreamOAuthProvider, type ProviderScope, type ProviderServices } from '../../../../src/upstream/oauth/provider.js';
import { openMemoryOAuthStore } from '../../../../src/store/open-tool-cache.js';
import type { StoredTokens } from '../../../../src/store/ports.js';

/** The store-backed OAuthClientProvider: what it keeps apart and when it refreshes (issue #16). */

const A = 'https://as-a.example';
const B = 'https://as-b.example';
const CALLBACK = 'http://127.0.0.1:7337/oauth/callback';

function setup(settings: ProviderScope['settings'] = undefined, redirectUrl = CALLBACK) {
  const store = openMemoryOAuthStore();
  onTestFinished(() => store.close());
  let now = 1_000_000;
  const offers: string[] = [];
  const refresh = vi.fn<ProviderServices['refresh']>(async (_scope, stored) => ({
    ...stored,
    tokens: { ...stored.tokens, access_token: 'fresh' },
    savedAt: now,
    expiresAt: now + 3_600_000,
  }));
  const services: ProviderServices = {
    store,
    now: () => now,
    offer: (_key, url) => void offers.push(url.href),
    stepUp: () => undefined,
    dpop: () => Promise.reject(new Error('no DPoP here')),
    refresh,
  };
  const scope: ProviderScope = { key: { server: 'remote', authHash: 'h1' }, serverUrl: 'https://mcp.example/mcp', settings, redirectUrl };
  return { store, services, scope, offers, refresh, provider: new UpstreamOAuthProvider(scope, services), tick: (ms: number) => (now += ms) };
}

describe('client registrations', () => {
  it('are keyed by issuer: a client id registered with one authorization server is never offered to another', async () => {
    const { provider } = setup();
    await provider.saveClientInformation({ client_id: 'registered-at-a', redirect_uris: [CALLBACK] }, { issuer: A });
    expect(await provider.clientInformation({ issuer: A })).toMatchObject({ client_id: 'registered-at-a', issuer: A });
    expect(await provider.clientInformation({ issuer: B })).toBeUndefined();
    expect(await provider.clientInformation()).toBeUndefined();
  });

  it('are dropped when registered for another redirect URI (the daemon moved to another port)', async () => {
    const { store, services, scope, provider } = setup();
    await provider.saveClientInformation({ client_id: 'old-port', redirect_uris: ['http://127.0.0.1:1111/oauth/callback'] }, { issuer: A });
    expect(await provider.clientInformation({ issuer: A })).toBeUndefined();
    expect(await store.getClient(scope.key, A)).toBeDefined();
    const elsewhere = new UpstreamOAuthProvider({ ...scope, redirectUrl: 'http://127.0.0.1:1111/oauth/callback' }, services);
    expect(await elsewhere.clientInformation({ issuer: A })).toMatchObject({ client_id: 'old-port' });
  });

  it('a configured client id goes to the first authorization server it meets, and to no other', async () => {
    const { provider } = setup({ clientId: 'configured', clientSecret: 'shh' });
    expect(await provider.clientInformation({ issuer: A })).toEqual({ client_id: 'configured', client_secret: 'shh', issuer: A });
    expect(await provider.clientInformation({ issuer: B })).toBeUndefined();
    expect(await provider.clientInformation({ issuer: A })).toMatchObject({ client_id: 'configured' });
  });

  it('a Client ID Metadata Document URL is offered as the metadata URL and kept as such', async () => {
    const url = 'https://switchboard.example/client.json';
    const { provider } = setup({ clientMetadataUrl: url, scopes: ['mcp'] });
    expect(provider.clientMetadataUrl).toBe(url);
    expect(provider.clientMetadata).toMatchObject({ redirect_uris: [CALLBACK], grant_types: ['authorization_code', 'refresh_token'], scope: 'mcp' });
    await provider.saveClientInformation({ client_id: url }, { issuer: A });
    expect(await provider.clientInformation({ issuer: A })).toMatchObject({ client_id: url });
  });
});

describe('tokens', () => {
  it('are kept per issuer; the request path reads the latest, refreshed within its last minute', async () => {
    const { provider, refresh, tick } = setup();
    await provider.saveTokens({ access_token: 'a1', token_type: 'Bearer', expires_in: 3600, refresh_token: 'r1' }, { issuer: A });
    expect(await provider.tokens({ issuer: A })).toMatchObject({ access_token: 'a1', issuer: A });
    expect(await provider.tokens({ issuer: B })).toBeUndefined();
    expect(await provider.tokens()).toMatchObject({ access_token: 'a1' });
    tick(3_600_000 - 61_000);
    expect(await provider.tokens()).toMatchObject({ access_token: 'a1' });
    expect(refresh).not.toHaveBeenCalled();
    tick(2_000);
    expect(await provider.tokens()).toMatchObject({ access_token: 'fresh' });
    expect(refresh).toHaveBeenCalledTimes(1);
    // The SDK's own flow (with an issuer) gets what is stored, never a refresh behind its back.
    expect(await provider.tokens({ issuer: A })).toMatchObject({ access_token: 'a1' });
  });

  it('refreshDue: never without an expiry or a refresh token; half the life of a short-lived token', () => {
    const base: StoredTokens = { issuer: A, tokens: { refresh_token: 'r' }, savedAt: 0, expiresAt: 10_000 };
    expect(refreshDue({ ...base, expiresAt: undefined }, 1e12)).toBe(false);
    expect(refreshDue({ ...base, tokens: {} }, 1e12)).toBe(false);
    expect(refreshDue(base, 4_999)).toBe(false);
    expect(refreshDue(base, 5_000)).toBe(true);
  });

  it('invalidateCredentials forgets what the authorization server no longer accepts', async () => {
    const { provider, store, scope } = setup();
    await provider.saveClientInformation({ client_id: 'c', redirect_uris: [CALLBACK] }, { issuer: A });
    await provider.saveTokens({ access_token: 'a', token_type: 'Bearer' }, { issuer: A });
    await provider.invalidateCredentials('tokens');
    expect(await store.latestTokens(scope.key)).toBeUndefined();
    expect(await store.getClient(scope.key, A)).toBeDefined();
    await provider.invalidateCredentials('client');
    expect(await store.getClient(scope.key, A)).toBeUndefined();
  });
});

describe('a sign-in', () => {
  it('keeps its state only as a hash, with the PKCE verifier, usable once and for ten minutes', async () => {
    const { provider, store, offers, scope, tick } = setup({ scopes: ['extra'] });
    const state = await provider.state();
    await provider.saveCodeVerifier('the-verifier');
    const url = new URL(`https://as.example/authorize?state=${state}&scope=mcp`);
    provider.redirectToAuthorization(url);
    expect(new URL(offers[0]!).searchParams.get('scope')).toBe('extra mcp');
    expect(await store.peekPending(state, 0)).toBeUndefined();
    const hash = hashState(state);
    expect(await store.takePending(hash, 1_000_000)).toMatchObject({ server: 'remote', authHash: scope.key.authHash, codeVerifier: 'the-verifier' });
    expect(await store.takePending(hash, 1_000_000)).toBeUndefined();

    const later = await provider.state();
    tick(SIGN_IN_TTL_MS);
    expect(await store.takePending(hashState(later), 1_000_000 + SIGN_IN_TTL_MS)).toBeUndefined();
  });

  it('forgetting a server drops its tokens and pending sign-ins, not its registrations', async () => {
    const { provider, store, scope } = setup();
    await provider.saveClientInformation({ client_id: 'c', redirect_uris: [CALLBACK] }, { issuer: A });
    await provider.saveTokens({ access_token: 'a', token_type: 'Bearer' }, { issuer: A });
    const state = await provider.state();
    await store.forgetSignIn('remote');
    expect(await store.latestTokens(scope.key)).toBeUndefined();
    expect(await store.peekPending(hashState(state), 0)).toBeUndefined();
    expect(await store.getClient(scope.key, A)).toBeDefined();
  });
});

describe('redirect URI and settings hash', () => {
  it('builds the loopback callback from the listening address', () => {
    const at = (address: string, family: string): AddressInfo => ({ address, family, port: 7337 });
    expect(callbackUrlOf(at('127.0.0.1', 'IPv4'))).toBe('http://127.0.0.1:7337/oauth/callback');
    expect(callbackUrlOf(at('0.0.0.0', 'IPv4'))).toBe('http://127.0.0.1:7337/oauth/callback');
    expect(callbackUrlOf(at('::', 'IPv6'))).toBe('http://127.0.0.1:7337/oauth/callback');
    expect(callbackUrlOf(at('::1', 'IPv6'))).toBe('http://[::1]:7337/oauth/callback');
    expect(callbackUrlOf(null)).toBeUndefined();
  });

  it('a sign-in depends on the URL and the oauth settings, not on timeouts or headers', () => {
    const base = { url: 'https://mcp.example/mcp' };
    expect(authHashOf({ ...base, timeout: 5, headers: { 'X-A': 'b' } })).toBe(authHashOf(base));
    expect(authHashOf({ ...base, oauth: { clientId: 'x' } })).not.toBe(authHashOf(base));
    expect(authHashOf({ url: 'https://other.example/mcp' })).not.toBe(authHashOf(base));
  });
});

describe('discovery state', () => {
  it('is offered to the SDK, except right after a request carried our token (a 401 there may mean the server moved)', async () => {
    const { provider, scope, services } = setup();
    await provider.saveDiscoveryState({ authorizationServerUrl: A });
    expect(await provider.discoveryState()).toEqual({ authorizationServerUrl: A });
    await provider.saveTokens({ access_token: 'a', token_type: 'Bearer' }, { issuer: A });
    await provider.tokens();
    expect(await provider.discoveryState()).toBeUndefined();
    expect(await provider.discoveryState()).toEqual({ authorizationServerUrl: A });
    // A callback's provider never sent a token: it gets the state its sign-in started with.
    expect(await new UpstreamOAuthProvider(scope, services, { codeVerifier: 'v' }).discoveryState()).toEqual({ authorizationServerUrl: A });
  });
});
