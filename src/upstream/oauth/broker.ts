import { isIP, type AddressInfo } from 'node:net';
import type { FetchLike } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import type { ServerConfig } from '../../config/types.js';
import { errorMessage, SwitchboardError } from '../../errors.js';
import { resolveTransportKind } from '../../config/validate.js';
import { authHashOf } from './auth-hash.js';
import type { CredentialStore, OAuthKey, OAuthStore, StoredTokens } from '../../store/ports.js';
import type { Clock } from '../../util/clock.js';
import type { PublishEvent } from '../../events/daemon-events.js';
import { hashState, refreshDue, UpstreamOAuthProvider, type ProviderScope, type ProviderServices } from './provider.js';
import { isUnattended } from './client-credentials.js';
import { refreshStoredTokens, renewUnattended } from './refresh.js';
import { StepUpGuard } from './step-up.js';
import { dpopIdentity, type DpopIdentity } from './dpop-keys.js';
import { revokeStoredTokens } from './revoke.js';
import { loadedSdk, loadSdk } from '../sdk.js';

/** Where the browser comes back to: registered as the redirect URI of every client we register. */
export const OAUTH_CALLBACK_PATH = '/oauth/callback';

/** Bounds every request a sign-in makes to an authorization server on behalf of an operator. */
const AUTH_REQUEST_TIMEOUT_MS = 30_000;

/**
 * The loopback redirect URI for the daemon listening at `address` (RFC 8252 §7.3): the address
 * itself, or 127.0.0.1 for a wildcard bind, which accepts IPv4 loopback too.
 */
export function callbackUrlOf(address: AddressInfo | string | null): string | undefined {
  if (address === null || typeof address === 'string') return undefined;
  const host = address.address === '0.0.0.0' || address.address === '::' ? '127.0.0.1' : address.address;
  return `http://${isIP(host) === 6 ? `[${host}]` : host}:${address.port}${OAUTH_CALLBACK_PATH}`;
}

/**
 * The redirect URI behind a balancer (issue #43): `<publicUrl>/oauth/callback`, the same on every
 * replica, so a client registered through one is good on all and the browser may land on any.
 */
export function publicCallbackUrl(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${OAUTH_CALLBACK_PATH}`;
}

/** A started sign-in, as `/servers/:name` and `POST /servers/:name/login` show it. */
export interface SignInOffer {
  authorizationUrl: string;
  expiresAt: string;
}

/** The query the authorization server sends the browser back with. */
export interface CallbackQuery {
  state?: string | undefined;
  code?: string | undefined;
  iss?: string | undefined;
  error?: string | undefined;
}

export interface OAuthBrokerOptions {
  store: OAuthStore;
  /** The credentials an embedder stores per server (SPEC §3). */
  credentials: CredentialStore;
  clock: Clock;
  log: Logger;
  /** The daemon's callback URL; undefined while it does not listen (then nobody can sign in). */
  callbackUrl: () => string | undefined;
  /** @default globalThis.fetch */
  fetch?: FetchLike;
  /**
   * Where a completed sign-in and a sign-out are announced (`oauth.signed_in`, `oauth.signed_out`,
   * the server's name only): the event bus. @default nowhere
   */
  publish?: PublishEvent;
}

/**
 * The daemon's side of OAuth upstreams (issue #16): makes the SDK provider for each connect,
 * starts sign-ins (`login`), completes them from `/oauth/callback` (single-use, expiring `state`),
 * refreshes tokens one server at a time, forgets them (`logout`), and keeps the credentials an
 * embedder stores (SPEC §3). It never logs a URL, token, code or secret.
 */
export class OAuthBroker {
  readonly #store: OAuthStore;
  readonly #credentials: CredentialStore;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #callbackUrl: () => string | undefined;
  readonly #fetch: FetchLike;
  readonly #publish: PublishEvent | undefined;
  readonly #offers = new Map<string, { authHash: string; url: string; expiresAt: number; stepUp: boolean }>();
  readonly #stepUps = new StepUpGuard();
  /** One DPoP key and session per server and settings: its nonces must outlive a connect. */
  readonly #dpop = new Map<string, Promise<DpopIdentity>>();
  readonly #refreshing = new Map<string, Promise<StoredTokens | undefined>>();
  readonly #services: ProviderServices;

  constructor(options: OAuthBrokerOptions) {
    this.#store = options.store;
    this.#credentials = options.credentials;
    this.#clock = options.clock;
    this.#log = options.log;
    this.#callbackUrl = options.callbackUrl;
    this.#publish = options.publish;
    const base = options.fetch ?? ((url, init) => fetch(url, init));
    this.#fetch = (url, init) => base(url, { ...init, signal: withTimeout(init?.signal) });
    const dpop = (key: OAuthKey): Promise<DpopIdentity> => {
      const id = `${key.server}\u0000${key.authHash}`;
      let identity = this.#dpop.get(id);
      if (!identity) {
        identity = this.#store.latestTokens(key).then((stored) => dpopIdentity(stored?.tokens));
        identity.catch(() => this.#dpop.delete(id));
        this.#dpop.set(id, identity);
      }
      return identity;
    };
    const deps = { store: this.#store, now: () => this.#clock.now(), log: this.#log, fetch: this.#fetch, dpop };
    this.#services = {
      store: this.#store,
      now: () => this.#clock.now(),
      offer: (key, url, expiresAt, stepUp) => void this.#offers.set(key.server, { authHash: key.authHash, url: url.href, expiresAt, stepUp }),
      stepUp: (key, challenged, tokenScope) => this.#stepUps.refusal(key, challenged, tokenScope),
      dpop,
      refresh: (scope, stored, provider) => {
        const id = `${scope.key.server}\u0000${scope.key.authHash}`;
        let running = this.#refreshing.get(id);
        if (!running) {
          const renew = (current: StoredTokens): Promise<StoredTokens | undefined> =>
            provider.unattended ? renewUnattended(deps, scope, current, provider) : refreshStoredTokens(deps, scope, current, provider);
          const store = this.#store;
          const renewal = store.withRefreshLock
            ? // Daemons sharing the store refresh one at a time (issue #28): under the lock, the
              // tokens are read again, and what another daemon refreshed meanwhile is used as is.
              store.withRefreshLock(scope.key, async () => {
                const current = await store.getTokens(scope.key, stored.issuer);
                if (!current) return undefined;
                return refreshDue(current, this.#clock.now(), provider.unattended) ? renew(current) : current;
              })
            : renew(stored);
          running = renewal.finally(() => this.#refreshing.delete(id));
          this.#refreshing.set(id, running);
        }
        return running;
      },
    };
  }

  /**
   * The provider for one connect of `config` (already resolved: a static `Authorization`
   * header, the config's own or a stored credential, takes precedence and means no OAuth).
   */
  providerFor(name: string, config: ServerConfig): UpstreamOAuthProvider | undefined {
    const scope = this.#scopeOf(name, config);
    return typeof scope === 'string' ? undefined : new UpstreamOAuthProvider(scope, this.#services);
  }

  /** The sign-in waiting for a person, when there is one for the server's current settings. */
  signInOffer(name: string, config: ServerConfig): SignInOffer | undefined {
    const offer = this.#offers.get(name);
    if (!offer || offer.authHash !== authHashOf(config) || offer.expiresAt <= this.#clock.now()) return undefined;
    return { authorizationUrl: offer.url, expiresAt: new Date(offer.expiresAt).toISOString() };
  }

  /**
   * `login`: the sign-in already waiting, or a new one (a fresh authorization even when tokens
   * exist: a person asking to sign in may want another account or more scope).
   */
  async begin(name: string, config: ServerConfig): Promise<SignInOffer> {
    const scope = await this.#applicable(name, config);
    if (isUnattended(scope.settings)) {
      throw new SwitchboardError('OAUTH_NOT_APPLICABLE', `MCP server "${name}" signs in by itself (oauth.grant "client_credentials"); there is nothing for a person to do`);
    }
    const waiting = this.signInOffer(name, config);
    if (waiting) return waiting;
    // Discovery runs afresh: the server may have moved to another authorization server since
    // (its old one then keeps accepting our refresh token while the server refuses what it issues).
    await this.#store.deleteDiscovery(scope.key);
    const provider = new UpstreamOAuthProvider(scope, this.#services);
    try {
      const { auth } = await loadSdk();
      await auth(provider, { serverUrl: scope.serverUrl, forceReauthorization: true, fetchFn: this.#fetch });
    } catch (err) {
      throw new SwitchboardError('UPSTREAM_AUTH_FAILED', `Could not start signing in to MCP server "${name}": ${errorMessage(err)}`, { cause: err });
    }
    const offer = this.signInOffer(name, config);
    if (!provider.offered || !offer) throw new SwitchboardError('UPSTREAM_AUTH_FAILED', `MCP server "${name}" gave no authorization URL`);
    this.#log.info({ server: name }, 'sign-in started');
    return offer;
  }

  /**
   * `/oauth/callback`: takes the pending sign-in its `state` names (once; an unknown, used or
   * expired state is refused), exchanges the code at the authorization server the sign-in
   * started with, and returns the server's name.
   */
  async complete(query: CallbackQuery, configOf: (server: string) => ServerConfig | undefined): Promise<string> {
    const pending = query.state ? await this.#store.takePending(hashState(query.state), this.#clock.now()) : undefined;
    if (!pending) throw new SwitchboardError('OAUTH_STATE_INVALID');
    const { server } = pending;
    const offer = this.#offers.get(server)?.authHash === pending.authHash ? this.#offers.get(server) : undefined;
    if (offer) this.#offers.delete(server);
    const config = configOf(server);
    const scope = config && this.#scopeOf(server, config);
    if (!scope || typeof scope === 'string' || scope.key.authHash !== pending.authHash) {
      throw new SwitchboardError('OAUTH_STATE_INVALID', `The settings of MCP server "${server}" changed since this sign-in started; sign in again`);
    }
    if (query.error !== undefined || !query.code || !pending.codeVerifier) {
      // Only the error code is echoed: an error_description is the authorization server's (or an attacker's) text.
      const code = query.error && /^[\w.-]{1,64}$/.test(query.error) ? ` ("${query.error}")` : '';
      throw new SwitchboardError('UPSTREAM_AUTH_FAILED', `Signing in to MCP server "${server}" did not complete${code}; run "switchboard login ${server}" again`);
    }
    const provider = new UpstreamOAuthProvider(scope, this.#services, { codeVerifier: pending.codeVerifier });
    try {
      const { auth } = await loadSdk();
      await auth(provider, { serverUrl: scope.serverUrl, authorizationCode: query.code, iss: query.iss, fetchFn: this.#fetch });
    } catch (err) {
      throw new SwitchboardError('UPSTREAM_AUTH_FAILED', `Signing in to MCP server "${server}" failed: ${callbackErrorMessage(err)}`, { cause: err });
    }
    this.#stepUps.signedIn(scope.key, offer ? (new URL(offer.url).searchParams.get('scope') ?? '') : '', offer?.stepUp ?? false);
    this.#log.info({ server }, 'signed in');
    this.#publish?.({ type: 'oauth.signed_in', server });
    return server;
  }

  /** `logout`: revokes what the authorization server will take back, then forgets every token. */
  async forget(name: string, config: ServerConfig): Promise<void> {
    const scope = await this.#applicable(name, config);
    const revoked = await revokeStoredTokens(this.#store, scope.key, this.#fetch);
    await this.#store.forgetSignIn(name);
    this.forgetHere(name);
    this.#log.info({ server: name, revoked }, 'signed out');
    // The other replicas of a cluster drop what they hold of it and reconnect without it.
    this.#publish?.({ type: 'oauth.signed_out', server: name });
  }

  /**
   * What this process holds of a sign-in besides the store: the offer, the step-up count and the
   * DPoP key. On `logout`, and on a replica told that another one signed out (issue #43).
   */
  forgetHere(name: string): void {
    this.#offers.delete(name);
    this.#stepUps.forget(name);
    // The tokens are gone, and with them what the key was bound to: the next grant gets a new one.
    for (const id of this.#dpop.keys()) if (id.startsWith(`${name}\u0000`)) this.#dpop.delete(id);
  }

  /** The credential an embedder stored for `name` (SPEC §3): a bearer token, or stdio's `OAUTH_ACCESS_TOKEN`. */
  storedCredential(name: string): Promise<string | undefined> {
    return this.#credentials.get(name);
  }

  setStoredCredential(name: string, token: string): Promise<void> {
    return this.#credentials.put(name, token, this.#clock.now());
  }

  deleteStoredCredential(name: string): Promise<void> {
    return this.#credentials.delete(name);
  }

  async #applicable(name: string, config: ServerConfig): Promise<ProviderScope> {
    const scope = this.#scopeOf(name, config, (await this.#credentials.get(name)) !== undefined);
    if (typeof scope === 'string') throw new SwitchboardError('OAUTH_NOT_APPLICABLE', scope);
    return scope;
  }

  /** The provider scope of a server, or why it signs in some other way. */
  #scopeOf(name: string, config: ServerConfig, storedCredential = false): ProviderScope | string {
    const kind = resolveTransportKind(config);
    if (kind !== 'http' && kind !== 'sse') return `MCP server "${name}" is not an http or sse server; it has no OAuth sign-in`;
    if (!config.url) return `MCP server "${name}" has no url`;
    if (storedCredential || Object.keys(config.headers ?? {}).some((header) => header.toLowerCase() === 'authorization')) {
      return `MCP server "${name}" has its own Authorization header, which takes precedence over signing in`;
    }
    const redirectUrl = this.#callbackUrl();
    // The unattended grant has no browser coming back, so it needs no callback.
    if (!redirectUrl && !isUnattended(config.oauth)) return 'Switchboard is not listening on HTTP, so there is no callback to sign in with';
    return { key: { server: name, authHash: authHashOf(config) }, serverUrl: config.url, settings: config.oauth, redirectUrl };
  }
}

export type { OAuthKey };

/** The SDK's words, but a missing `iss` (RFC 9207) said plainly rather than as "received undefined". */
function callbackErrorMessage(err: unknown): string {
  const IssuerMismatchError = loadedSdk()?.IssuerMismatchError;
  if (IssuerMismatchError && err instanceof IssuerMismatchError && err.kind === 'authorization_response' && err.received === undefined) {
    return `the authorization server's redirect has no iss (it says it sends one, RFC 9207); expected ${JSON.stringify(err.expected)}`;
  }
  return errorMessage(err);
}

function withTimeout(signal: AbortSignal | null | undefined): AbortSignal {
  const deadline = AbortSignal.timeout(AUTH_REQUEST_TIMEOUT_MS);
  return signal ? AbortSignal.any([signal, deadline]) : deadline;
}
