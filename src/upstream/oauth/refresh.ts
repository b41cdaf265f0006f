import type { AuthorizationServerMetadata, FetchLike, OAuthClientInformationMixed, OAuthError, OAuthErrorCode } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import { errorMessage } from '../../errors.js';
import type { OAuthKey, OAuthStore, StoredTokens } from '../../store/ports.js';
import { DPOP_KEY_FIELD, isDpopBound, type DpopIdentity } from './dpop-keys.js';
import type { ProviderScope, UpstreamOAuthProvider } from './provider.js';
import { loadSdk, type Sdk } from '../sdk.js';

export interface RefreshDeps {
  store: OAuthStore;
  now(): number;
  log: Logger;
  fetch: FetchLike;
  dpop(key: OAuthKey): Promise<DpopIdentity>;
}

/** New DPoP-bound tokens keep the key of the ones they replace (the same key proved them). */
function keptKey(stored: StoredTokens, tokens: Record<string, unknown>): Record<string, unknown> {
  const key = stored.tokens[DPOP_KEY_FIELD];
  return key !== undefined && isDpopBound(tokens) ? { [DPOP_KEY_FIELD]: key } : {};
}

/** Codes with which an authorization server says the refresh token (or our client) is done for. */
function rejected(err: unknown, { OAuthError, OAuthErrorCode }: Sdk): err is OAuthError {
  return err instanceof OAuthError && [OAuthErrorCode.InvalidGrant, OAuthErrorCode.InvalidClient, OAuthErrorCode.UnauthorizedClient].includes(err.code as OAuthErrorCode);
}

/**
 * Trades the stored refresh token for new tokens at the authorization server the discovery
 * found, with the client registered there and the resource indicator used at sign-in (RFC
 * 8707). A rejected refresh token is deleted and `undefined` returned: the next request then
 * meets a 401 without tokens and the server goes to `needs_auth`. Any other failure (the
 * authorization server unreachable, say) keeps the stored tokens: they may still be accepted.
 */
export async function refreshStoredTokens(deps: RefreshDeps, scope: ProviderScope, stored: StoredTokens, provider: UpstreamOAuthProvider): Promise<StoredTokens | undefined> {
  const { store } = deps;
  const { key } = scope;
  const refreshToken = stored.tokens.refresh_token;
  const [discovery, client] = await Promise.all([store.getDiscovery(key), store.getClient(key, stored.issuer)]);
  const asUrl = discovery.state?.authorizationServerUrl;
  if (typeof refreshToken !== 'string' || typeof asUrl !== 'string' || !client) return stored;
  const log = deps.log.child({ server: key.server });
  const mcp = await loadSdk();
  try {
    const tokens = await mcp.refreshAuthorization(asUrl, {
      ...(discovery.state?.authorizationServerMetadata ? { metadata: discovery.state.authorizationServerMetadata as AuthorizationServerMetadata } : {}),
      clientInformation: client.info as OAuthClientInformationMixed,
      refreshToken,
      ...(discovery.resourceUrl ? { resource: discovery.resourceUrl } : {}),
      // A DPoP-bound refresh token is only good with a proof from its key (RFC 9449 §5).
      dpop: await provider.dpop(),
      fetchFn: deps.fetch,
    });
    const now = deps.now();
    const expiresAt = typeof tokens.expires_in === 'number' ? now + tokens.expires_in * 1000 : undefined;
    const saved = { ...tokens, issuer: stored.issuer, ...keptKey(stored, tokens) };
    await store.putTokens(key, stored.issuer, saved, expiresAt, now);
    log.debug('access token refreshed');
    return { issuer: stored.issuer, tokens: saved, expiresAt, savedAt: now };
  } catch (err) {
    if (rejected(err, mcp)) {
      await store.deleteTokens(key, stored.issuer);
      log.info({ code: err.code }, 'refresh token rejected; the server needs a new sign-in');
      return undefined;
    }
    log.warn({ err: errorMessage(err) }, 'token refresh failed; keeping the current token');
    return stored;
  }
}

/**
 * Unattended (`client_credentials`, issue #29): a token about to lapse is replaced by a new one
 * from the same grant, through the SDK's `fetchToken` and the provider's own client
 * authentication, with the scope and resource indicator of the one it replaces. Credentials the
 * authorization server refuses delete the token (the next request meets a 401 and the SDK asks
 * again, which then fails for all to see); any other failure keeps it.
 */
export async function renewUnattended(deps: RefreshDeps, scope: ProviderScope, stored: StoredTokens, provider: UpstreamOAuthProvider): Promise<StoredTokens | undefined> {
  const { store } = deps;
  const { key } = scope;
  const discovery = await store.getDiscovery(key);
  const asUrl = discovery.state?.authorizationServerUrl;
  if (typeof asUrl !== 'string') return stored;
  const log = deps.log.child({ server: key.server });
  const mcp = await loadSdk();
  try {
    const granted = stored.tokens.scope;
    const tokens = await mcp.fetchToken(provider, asUrl, {
      ...(discovery.state?.authorizationServerMetadata ? { metadata: discovery.state.authorizationServerMetadata as AuthorizationServerMetadata } : {}),
      ...(discovery.resourceUrl ? { resource: discovery.resourceUrl } : {}),
      ...(typeof granted === 'string' && granted !== '' ? { scope: granted } : {}),
      fetchFn: deps.fetch,
    });
    const now = deps.now();
    const expiresAt = typeof tokens.expires_in === 'number' ? now + tokens.expires_in * 1000 : undefined;
    const saved = { ...tokens, issuer: stored.issuer, ...(isDpopBound(tokens) ? { [DPOP_KEY_FIELD]: (await deps.dpop(key)).jwk } : {}) };
    await store.putTokens(key, stored.issuer, saved, expiresAt, now);
    log.debug('access token renewed (client credentials)');
    return { issuer: stored.issuer, tokens: saved, expiresAt, savedAt: now };
  } catch (err) {
    if (rejected(err, mcp)) {
      await store.deleteTokens(key, stored.issuer);
      log.warn({ code: err.code }, 'the authorization server refused the client credentials');
      return undefined;
    }
    log.warn({ err: errorMessage(err) }, 'token renewal failed; keeping the current token');
    return stored;
  }
}
