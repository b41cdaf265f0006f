import { createHash, randomBytes } from 'node:crypto';
import type {
  AddClientAuthentication,
  DpopSession,
  OAuthClientInformationContext,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { ServerOAuthConfig } from '../../config/types.js';
import type { ClientOrigin, OAuthKey, OAuthStore, StoredTokens } from '../../store/ports.js';
import { StepUpRefusedError } from './auth-errors.js';
import { DPOP_KEY_FIELD, dpopSessionFor, isDpopBound, withoutDpopKey, type DpopIdentity } from './dpop-keys.js';
import { sameEndpoint } from './step-up.js';
import { loadSdk } from '../sdk.js';
import { isUnattended, unattendedRequest, privateKeyJwtAuth, unattendedClientInfo, unattendedMetadata } from './client-credentials.js';

/** How long a started sign-in (its `state` and PKCE verifier) stays usable. */
export const SIGN_IN_TTL_MS = 10 * 60 * 1000;

/** One upstream's sign-in scope, as the broker resolved it from the server's config. */
export interface ProviderScope {
  key: OAuthKey;
  /** The MCP endpoint (the protected resource). */
  serverUrl: string;
  settings: ServerOAuthConfig | undefined;
  /** The daemon's `/oauth/callback` on its listening address; none for an unattended (`client_credentials`) server. */
  redirectUrl: string | undefined;
}

/** What the provider needs from the daemon-wide broker. */
export interface ProviderServices {
  readonly store: OAuthStore;
  now(): number;
  /** A sign-in was started: its authorization URL, for `/servers/:name` and `login`; `stepUp` when a 403 asked for more scope. */
  offer(key: OAuthKey, url: URL, expiresAt: number, stepUp: boolean): void;
  /** Why a step-up sign-in for `challenged` must not be offered (step-up.ts), or undefined when it may. */
  stepUp(key: OAuthKey, challenged: string[], tokenScope: string | undefined): string | undefined;
  /** The upstream's DPoP key and session (one per server and settings; see dpop-keys.ts). */
  dpop(key: OAuthKey): Promise<DpopIdentity>;
  /**
   * Refreshes the stored tokens (or, unattended, gets new ones with `provider`), one refresh per
   * server at a time; undefined when rejected.
   */
  refresh(scope: ProviderScope, stored: StoredTokens, provider: UpstreamOAuthProvider): Promise<StoredTokens | undefined>;
}

/** The single-use `state` of a sign-in is kept only as this hash (the callback presents it). */
export function hashState(state: string): string {
  return createHash('sha256').update(state, 'utf8').digest('hex');
}

/**
 * Refresh once less than this is left of a token's life: a minute, or half the life of a
 * short-lived token, so a request never leaves with a token about to lapse.
 */
export function refreshDue(stored: StoredTokens, now: number, unattended = false): boolean {
  // Unattended, a token is renewed with the client's own credentials: no refresh token needed.
  if (stored.expiresAt === undefined || (!unattended && typeof stored.tokens.refresh_token !== 'string')) return false;
  const margin = Math.min(60_000, Math.max(0, stored.expiresAt - stored.savedAt) / 2);
  return now >= stored.expiresAt - margin;
}

/**
 * The SDK's `OAuthClientProvider` for one upstream, backed by the OAuth store: registrations
 * per issuer (a client id from one authorization server is never offered to another), tokens,
 * the PKCE verifier and discovery state. A fresh one is made per connect attempt or sign-in;
 * everything lasting is in the store. `bound` is the pending sign-in a callback completes.
 * Every store call is awaited (the SDK awaits the provider): a write is kept before the flow
 * goes on — the verifier, say, before the browser can come back with the code.
 */
export class UpstreamOAuthProvider implements OAuthClientProvider {
  readonly #scope: ProviderScope;
  readonly #services: ProviderServices;
  readonly #bound: { codeVerifier: string } | undefined;
  /** The `state` this provider handed out, whose pending row gets the PKCE verifier. */
  #state: string | undefined;
  /** A request went out with our token since discovery was last read (see `discoveryState`). */
  #tokenSent = false;
  /** The scope the server's last 403 `insufficient_scope` asked for, until a sign-in is offered. */
  #challenged: string[] | undefined;
  /** The last authorization URL this provider offered. */
  offered: URL | undefined;
  /** Signs an RFC 7523 client assertion into each token request (unattended, with a private key). */
  readonly addClientAuthentication: AddClientAuthentication | undefined;

  constructor(scope: ProviderScope, services: ProviderServices, bound?: { codeVerifier: string }) {
    this.#scope = scope;
    this.#services = services;
    this.#bound = bound;
    const { settings } = scope;
    this.addClientAuthentication = isUnattended(settings) && settings?.privateKeyJwt ? privateKeyJwtAuth(settings, scope.key.server) : undefined;
  }

  /** Whether this server's tokens come from the daemon itself (`client_credentials`), with nobody to sign in. */
  get unattended(): boolean {
    return isUnattended(this.#scope.settings);
  }

  /** Undefined for the unattended grant: the SDK then fetches tokens itself instead of redirecting. */
  get redirectUrl(): string | undefined {
    return this.unattended ? undefined : this.#scope.redirectUrl;
  }

  get clientMetadataUrl(): string | undefined {
    return this.#scope.settings?.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const { settings, redirectUrl } = this.#scope;
    if (settings && isUnattended(settings)) return unattendedMetadata(settings);
    const scopes = settings?.scopes;
    return {
      client_name: 'Switchboard',
      redirect_uris: redirectUrl ? [redirectUrl] : [],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      ...(scopes && scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
    };
  }

  async state(): Promise<string> {
    const state = randomBytes(32).toString('base64url');
    const now = this.#services.now();
    this.#state = state;
    await this.#services.store.addPending(hashState(state), this.#scope.key, now, now + SIGN_IN_TTL_MS);
    return state;
  }

  async clientInformation(ctx?: OAuthClientInformationContext): Promise<StoredOAuthClientInformation | undefined> {
    if (!ctx) return undefined;
    const { store } = this.#services;
    const { key, settings } = this.#scope;
    if (settings && isUnattended(settings)) return this.#unattendedClient(settings, ctx.issuer);
    const stored = await store.getClient(key, ctx.issuer);
    if (stored && this.#stillValid(stored.info, stored.origin)) return { ...stored.info, issuer: ctx.issuer } as StoredOAuthClientInformation;
    if (!settings?.clientId) return undefined;
    // A configured client id belongs to the first authorization server it is used with; one
    // named by the server later is never sent it, and registers a client of its own instead.
    const bound = (await store.clientsOf(key)).find((client) => client.origin === 'configured');
    if (bound && bound.issuer !== ctx.issuer) return undefined;
    const info = { client_id: settings.clientId, ...(settings.clientSecret ? { client_secret: settings.clientSecret } : {}), issuer: ctx.issuer };
    await store.putClient(key, ctx.issuer, info, 'configured', this.#services.now());
    return info;
  }

  async saveClientInformation(info: StoredOAuthClientInformation, ctx?: OAuthClientInformationContext): Promise<void> {
    const issuer = ctx?.issuer ?? info.issuer;
    if (!issuer) return;
    const { settings } = this.#scope;
    const origin: ClientOrigin = info.client_id === settings?.clientMetadataUrl ? 'metadata-document' : info.client_id === settings?.clientId ? 'configured' : 'registered';
    await this.#services.store.putClient(this.#scope.key, issuer, { ...info, issuer }, origin, this.#services.now());
  }

  /**
   * With `ctx` (the SDK's own flow) the tokens of that issuer. Without (the bearer read before
   * every request) the latest tokens, refreshed first when they are about to expire.
   */
  async tokens(ctx?: OAuthClientInformationContext): Promise<StoredOAuthTokens | undefined> {
    const { store } = this.#services;
    const stored = await (ctx ? store.getTokens(this.#scope.key, ctx.issuer) : store.latestTokens(this.#scope.key));
    if (!stored) return undefined;
    if (ctx) return asTokens(stored);
    const sent = refreshDue(stored, this.#services.now(), this.unattended) ? await this.#services.refresh(this.#scope, stored, this) : stored;
    if (sent) this.#tokenSent = true;
    return sent && asTokens(sent);
  }

  async saveTokens(tokens: StoredOAuthTokens, ctx?: OAuthClientInformationContext): Promise<void> {
    const issuer = ctx?.issuer ?? tokens.issuer;
    if (!issuer) return;
    const now = this.#services.now();
    const expiresAt = typeof tokens.expires_in === 'number' ? now + tokens.expires_in * 1000 : undefined;
    // A DPoP-bound token is stored with the key it is bound to.
    const key = isDpopBound(tokens) ? { [DPOP_KEY_FIELD]: (await this.#services.dpop(this.#scope.key)).jwk } : {};
    await this.#services.store.putTokens(this.#scope.key, issuer, { ...tokens, issuer, ...key }, expiresAt, now);
  }

  /** DPoP (RFC 9449) when the authorization server offers it: the SDK proves possession and retries nonce challenges. */
  dpop(): Promise<DpopSession | undefined> {
    return dpopSessionFor(this.#services.store, this.#scope.key, this.#services.dpop);
  }

  /**
   * Sees the MCP endpoint's answers (transports.ts). A 403 `insufficient_scope` makes the next
   * authorization the SDK starts a step-up for that scope — unless the scope was just granted,
   * or there were sign-ins enough in a row (step-up.ts): then the answer is refused here, before
   * the SDK refreshes or starts another sign-in, with an error that fails the server.
   */
  async observeResponse(response: Response): Promise<void> {
    if (response.status !== 401 && response.status !== 403) return;
    if (!sameEndpoint(response.url, this.#scope.serverUrl)) return;
    const { error, scope } = (await loadSdk()).extractWWWAuthenticateParams(response);
    this.#challenged = response.status === 403 && error === 'insufficient_scope' ? (scope ?? '').split(' ').filter(Boolean) : undefined;
    if (!this.#challenged) return;
    const granted = (await this.#services.store.latestTokens(this.#scope.key))?.tokens.scope;
    const refusal = this.#services.stepUp(this.#scope.key, this.#challenged, typeof granted === 'string' ? granted : undefined);
    if (refusal) throw new StepUpRefusedError(refusal);
  }

  redirectToAuthorization(url: URL): void {
    const stepUp = this.#challenged !== undefined;
    this.#challenged = undefined;
    // Configured scopes are asked for on top of what the server named, whatever the SDK chose.
    const wanted = this.#scope.settings?.scopes;
    if (wanted && wanted.length > 0) {
      const asked = (url.searchParams.get('scope') ?? '').split(' ').filter(Boolean);
      url.searchParams.set('scope', [...new Set([...wanted, ...asked])].join(' '));
    }
    this.offered = url;
    const now = this.#services.now();
    this.#services.offer(this.#scope.key, url, now + SIGN_IN_TTL_MS, stepUp);
  }

  /** The unattended grant's token request; undefined (the SDK's authorization-code default) otherwise. */
  async prepareTokenRequest(scope?: string): Promise<URLSearchParams | undefined> {
    const { settings, key } = this.#scope;
    return settings && isUnattended(settings) ? unattendedRequest(settings, key.server, scope) : undefined;
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    if (this.#state) await this.#services.store.setVerifier(hashState(this.#state), codeVerifier);
  }

  codeVerifier(): string {
    if (!this.#bound) throw new Error('no sign-in in progress for this provider');
    return this.#bound.codeVerifier;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    const { store } = this.#services;
    const { key } = this.#scope;
    if (scope === 'all' || scope === 'client') await store.deleteClients(key);
    if (scope === 'all' || scope === 'tokens') await store.deleteAllTokens(key);
    if (scope === 'all' || scope === 'discovery') await store.deleteDiscovery(key);
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    await this.#services.store.putDiscovery(this.#scope.key, state as unknown as Record<string, unknown>, this.#services.now());
  }

  /**
   * The SDK reads this at the start of every authorization. When that follows a request that
   * carried our token (a 401 or 403 on it), the cached discovery may be what is wrong — the
   * server may have moved to another authorization server (SEP-2352) — so it is not offered and
   * the SDK discovers afresh. A sign-in's callback leg reads it from a provider of its own.
   */
  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    if (this.#tokenSent) {
      this.#tokenSent = false;
      return undefined;
    }
    return (await this.#services.store.getDiscovery(this.#scope.key)).state as OAuthDiscoveryState | undefined;
  }

  async saveResourceUrl(resourceUrl: string): Promise<void> {
    await this.#services.store.putResourceUrl(this.#scope.key, resourceUrl, this.#services.now());
  }

  async resourceUrl(): Promise<string | undefined> {
    return (await this.#services.store.getDiscovery(this.#scope.key)).resourceUrl;
  }

  /**
   * The configured client of an unattended server. Like a configured client id of a person's
   * sign-in it belongs to the first authorization server it is used with (only the binding is
   * stored, never the secret): a server that later names another one is refused, since there is
   * nobody to ask whether the credentials may go there.
   */
  async #unattendedClient(settings: ServerOAuthConfig, issuer: string): Promise<StoredOAuthClientInformation> {
    const { store } = this.#services;
    const { key } = this.#scope;
    const info = unattendedClientInfo(settings, key.server);
    const bound = (await store.clientsOf(key)).find((client) => client.origin === 'configured');
    if (bound && bound.issuer !== issuer) {
      throw new Error(`MCP server "${key.server}" now names another authorization server than the one its client credentials were first used with; they are not sent there`);
    }
    if (!bound) await store.putClient(key, issuer, { client_id: info.client_id, issuer }, 'configured', this.#services.now());
    return { ...info, issuer } as StoredOAuthClientInformation;
  }

  /**
   * A registration this client made is tied to the redirect URI it registered (the daemon's
   * port may have changed since); one made from a document or the config to what the config says now.
   */
  #stillValid(info: Record<string, unknown>, origin: ClientOrigin): boolean {
    const { settings, redirectUrl } = this.#scope;
    if (origin === 'configured') return info.client_id === settings?.clientId;
    if (origin === 'metadata-document') return info.client_id === settings?.clientMetadataUrl;
    const uris = info.redirect_uris;
    return !Array.isArray(uris) || uris.includes(redirectUrl);
  }
}

function asTokens(stored: StoredTokens): StoredOAuthTokens {
  return withoutDpopKey({ ...stored.tokens, issuer: stored.issuer } as StoredOAuthTokens);
}
