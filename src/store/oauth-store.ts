import type { Database, Statement } from 'better-sqlite3';
import { errorMessage } from '../errors.js';
import { CredentialStore } from './credential-store.js';
import type { StoreLogger } from './db.js';

/**
 * What OAuth upstreams keep between runs (issue #16), beside the tool cache in the same 0600
 * database: client registrations per authorization server (`issuer`), tokens, discovery state
 * and the pending sign-ins (by the hash of their `state`, with the PKCE verifier), plus — through
 * `credentials` — the static credentials an embedder stores for a server (SPEC §3). Rows are keyed by server and the hash
 * of the settings a sign-in depends on (`authHash`), so an edit to those forgets the sign-in.
 *
 * Values are opaque JSON to this module. Statements are prepared once and every write is one
 * synchronous statement or transaction. Like the other stores it never throws: a failing read
 * is a miss and a failing write is logged — by key, never by value.
 */

/** One server's sign-in scope: its name and the hash of its OAuth-relevant settings. */
export interface OAuthKey {
  server: string;
  authHash: string;
}

/** How a client registration came to be. */
export type ClientOrigin = 'registered' | 'configured' | 'metadata-document';

export interface StoredClient {
  info: Record<string, unknown>;
  origin: ClientOrigin;
}

export interface StoredTokens {
  issuer: string;
  tokens: Record<string, unknown>;
  /** When the access token expires (ms since the epoch); undefined when the server did not say. */
  expiresAt: number | undefined;
  savedAt: number;
}

export interface PendingSignIn {
  server: string;
  authHash: string;
  codeVerifier: string | undefined;
  expiresAt: number;
}

interface TokenRow {
  issuer: string;
  tokens_json: string;
  expires_at: number | null;
  saved_at: number;
}

interface PendingRow {
  server: string;
  auth_hash: string;
  code_verifier: string | null;
  expires_at: number;
}

export interface OAuthStoreOptions {
  logger?: StoreLogger;
  /** Close the connection on `close()`: set when the store opened it (an in-memory fallback). */
  ownsConnection?: boolean;
}

export class OAuthStore {
  /** The static credentials of SPEC §3, in the same database. */
  readonly credentials: CredentialStore;
  readonly #db: Database;
  readonly #log: StoreLogger | undefined;
  readonly #ownsConnection: boolean;
  readonly #sql: {
    getClient: Statement<[string, string, string], { client_json: string; origin: ClientOrigin }>;
    putClient: Statement<[string, string, string, string, string, number]>;
    clientsOf: Statement<[string, string], { issuer: string; client_json: string; origin: ClientOrigin }>;
    deleteClients: Statement<[string, string]>;
    deleteAllTokens: Statement<[string, string]>;
    getTokens: Statement<[string, string, string], TokenRow>;
    latestTokens: Statement<[string, string], TokenRow>;
    putTokens: Statement<[string, string, string, string, number | null, number]>;
    deleteTokens: Statement<[string, string, string]>;
    deleteServerTokens: Statement<[string]>;
    getDiscovery: Statement<[string, string], { state_json: string | null; resource_url: string | null }>;
    putDiscovery: Statement<[string, string, string | null, number]>;
    putResource: Statement<[string, string, string, number]>;
    deleteDiscovery: Statement<[string, string]>;
    putPending: Statement<[string, string, string, number, number]>;
    setVerifier: Statement<[string, string]>;
    getPending: Statement<[string], PendingRow>;
    deletePending: Statement<[string]>;
    prunePending: Statement<[number]>;
    deleteServerPending: Statement<[string]>;
  };

  /** Throws when the OAuth tables are missing (a database opened read-only from before them). */
  constructor(db: Database, options: OAuthStoreOptions = {}) {
    this.#db = db;
    this.#log = options.logger;
    this.#ownsConnection = options.ownsConnection ?? false;
    this.credentials = new CredentialStore(db, { read: (what, server, read) => this.#read(what, server, read), write: (what, server, write) => this.#write(what, server, write) });
    const key = 'server = ? AND auth_hash = ?';
    this.#sql = {
      getClient: db.prepare(`SELECT client_json, origin FROM oauth_client WHERE ${key} AND issuer = ?`),
      putClient: db.prepare(`
        INSERT INTO oauth_client (server, auth_hash, issuer, client_json, origin, saved_at) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (server, auth_hash, issuer) DO UPDATE SET client_json = excluded.client_json, origin = excluded.origin, saved_at = excluded.saved_at`),
      clientsOf: db.prepare(`SELECT issuer, client_json, origin FROM oauth_client WHERE ${key}`),
      deleteClients: db.prepare(`DELETE FROM oauth_client WHERE ${key}`),
      deleteAllTokens: db.prepare(`DELETE FROM oauth_token WHERE ${key}`),
      getTokens: db.prepare(`SELECT issuer, tokens_json, expires_at, saved_at FROM oauth_token WHERE ${key} AND issuer = ?`),
      latestTokens: db.prepare(`SELECT issuer, tokens_json, expires_at, saved_at FROM oauth_token WHERE ${key} ORDER BY saved_at DESC, rowid DESC LIMIT 1`),
      putTokens: db.prepare(`
        INSERT INTO oauth_token (server, auth_hash, issuer, tokens_json, expires_at, saved_at) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (server, auth_hash, issuer) DO UPDATE SET tokens_json = excluded.tokens_json, expires_at = excluded.expires_at, saved_at = excluded.saved_at`),
      deleteTokens: db.prepare(`DELETE FROM oauth_token WHERE ${key} AND issuer = ?`),
      deleteServerTokens: db.prepare('DELETE FROM oauth_token WHERE server = ?'),
      getDiscovery: db.prepare(`SELECT state_json, resource_url FROM oauth_discovery WHERE ${key}`),
      putDiscovery: db.prepare(`
        INSERT INTO oauth_discovery (server, auth_hash, state_json, saved_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (server, auth_hash) DO UPDATE SET state_json = excluded.state_json, saved_at = excluded.saved_at`),
      putResource: db.prepare(`
        INSERT INTO oauth_discovery (server, auth_hash, resource_url, saved_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (server, auth_hash) DO UPDATE SET resource_url = excluded.resource_url, saved_at = excluded.saved_at`),
      deleteDiscovery: db.prepare(`DELETE FROM oauth_discovery WHERE ${key}`),
      putPending: db.prepare('INSERT INTO oauth_pending (state_hash, server, auth_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)'),
      setVerifier: db.prepare('UPDATE oauth_pending SET code_verifier = ? WHERE state_hash = ?'),
      getPending: db.prepare('SELECT server, auth_hash, code_verifier, expires_at FROM oauth_pending WHERE state_hash = ?'),
      deletePending: db.prepare('DELETE FROM oauth_pending WHERE state_hash = ?'),
      prunePending: db.prepare('DELETE FROM oauth_pending WHERE expires_at <= ?'),
      deleteServerPending: db.prepare('DELETE FROM oauth_pending WHERE server = ?'),
    };
  }

  // --- client registrations ---------------------------------------------------------------

  getClient(key: OAuthKey, issuer: string): StoredClient | undefined {
    return this.#read('client read', key.server, () => {
      const row = this.#sql.getClient.get(key.server, key.authHash, issuer);
      return row && { info: parse(row.client_json), origin: row.origin };
    });
  }

  /** Every registration of this server, by issuer (a configured client id is bound to one). */
  clientsOf(key: OAuthKey): Array<StoredClient & { issuer: string }> {
    return (
      this.#read('client read', key.server, () =>
        this.#sql.clientsOf.all(key.server, key.authHash).map((row) => ({ issuer: row.issuer, info: parse(row.client_json), origin: row.origin })),
      ) ?? []
    );
  }

  putClient(key: OAuthKey, issuer: string, info: Record<string, unknown>, origin: ClientOrigin, now: number): void {
    this.#write('client write', key.server, () => this.#sql.putClient.run(key.server, key.authHash, issuer, JSON.stringify(info), origin, now));
  }

  /** The authorization server said it does not know our client: register afresh next time. */
  deleteClients(key: OAuthKey): void {
    this.#write('client delete', key.server, () => this.#sql.deleteClients.run(key.server, key.authHash));
  }

  // --- tokens -----------------------------------------------------------------------------

  getTokens(key: OAuthKey, issuer: string): StoredTokens | undefined {
    return this.#read('token read', key.server, () => tokensOf(this.#sql.getTokens.get(key.server, key.authHash, issuer)));
  }

  /** The tokens saved last, whatever their issuer: what the next request to the server carries. */
  latestTokens(key: OAuthKey): StoredTokens | undefined {
    return this.#read('token read', key.server, () => tokensOf(this.#sql.latestTokens.get(key.server, key.authHash)));
  }

  putTokens(key: OAuthKey, issuer: string, tokens: Record<string, unknown>, expiresAt: number | undefined, now: number): void {
    this.#write('token write', key.server, () =>
      this.#sql.putTokens.run(key.server, key.authHash, issuer, JSON.stringify(tokens), expiresAt ?? null, now),
    );
  }

  deleteTokens(key: OAuthKey, issuer: string): void {
    this.#write('token delete', key.server, () => this.#sql.deleteTokens.run(key.server, key.authHash, issuer));
  }

  deleteAllTokens(key: OAuthKey): void {
    this.#write('token delete', key.server, () => this.#sql.deleteAllTokens.run(key.server, key.authHash));
  }

  // --- discovery --------------------------------------------------------------------------

  getDiscovery(key: OAuthKey): { state: Record<string, unknown> | undefined; resourceUrl: string | undefined } {
    const row = this.#read('discovery read', key.server, () => this.#sql.getDiscovery.get(key.server, key.authHash));
    return { state: row?.state_json ? parse(row.state_json) : undefined, resourceUrl: row?.resource_url ?? undefined };
  }

  putDiscovery(key: OAuthKey, state: Record<string, unknown> | undefined, now: number): void {
    this.#write('discovery write', key.server, () =>
      this.#sql.putDiscovery.run(key.server, key.authHash, state === undefined ? null : JSON.stringify(state), now),
    );
  }

  putResourceUrl(key: OAuthKey, resourceUrl: string, now: number): void {
    this.#write('discovery write', key.server, () => this.#sql.putResource.run(key.server, key.authHash, resourceUrl, now));
  }

  deleteDiscovery(key: OAuthKey): void {
    this.#write('discovery delete', key.server, () => this.#sql.deleteDiscovery.run(key.server, key.authHash));
  }

  // --- pending sign-ins -------------------------------------------------------------------

  /** Records a sign-in started with the `state` whose hash is given; expired ones are dropped. */
  addPending(stateHash: string, key: OAuthKey, now: number, expiresAt: number): void {
    this.#write('pending write', key.server, () =>
      this.#db.transaction(() => {
        this.#sql.prunePending.run(now);
        this.#sql.putPending.run(stateHash, key.server, key.authHash, now, expiresAt);
      })(),
    );
  }

  setVerifier(stateHash: string, codeVerifier: string): void {
    this.#write('pending write', '', () => this.#sql.setVerifier.run(codeVerifier, stateHash));
  }

  /** Looks a pending sign-in up without using it. */
  peekPending(stateHash: string, now: number): PendingSignIn | undefined {
    const row = this.#read('pending read', '', () => this.#sql.getPending.get(stateHash));
    return row && row.expires_at > now ? pendingOf(row) : undefined;
  }

  /**
   * Takes a pending sign-in out, so its `state` can never be used twice. Undefined when unknown,
   * already taken or expired (an expired one is deleted all the same).
   */
  takePending(stateHash: string, now: number): PendingSignIn | undefined {
    const row = this.#read('pending read', '', () =>
      this.#db.transaction(() => {
        const found = this.#sql.getPending.get(stateHash);
        if (found) this.#sql.deletePending.run(stateHash);
        return found;
      })(),
    );
    return row && row.expires_at > now ? pendingOf(row) : undefined;
  }

  // --- forgetting -------------------------------------------------------------------------

  /** `logout`: every token and pending sign-in of the server, whatever its settings hash. */
  forgetSignIn(server: string): void {
    this.#write('logout', server, () =>
      this.#db.transaction(() => {
        this.#sql.deleteServerTokens.run(server);
        this.#sql.deleteServerPending.run(server);
      })(),
    );
  }

  /** Closes the connection if this store opened it; the shared one is the tool cache's to close. */
  close(): void {
    if (this.#ownsConnection && this.#db.open) this.#db.close();
  }

  #read<T>(what: string, server: string, read: () => T): T | undefined {
    if (!this.#db.open) return undefined;
    try {
      return read();
    } catch (err) {
      this.#log?.warn({ server, err: errorMessage(err) }, `oauth ${what} failed`);
      return undefined;
    }
  }

  #write(what: string, server: string, write: () => unknown): void {
    if (!this.#db.open) return;
    try {
      write();
    } catch (err) {
      this.#log?.warn({ server, err: errorMessage(err) }, `oauth ${what} failed`);
    }
  }
}

function parse(json: string): Record<string, unknown> {
  return JSON.parse(json) as Record<string, unknown>;
}

function tokensOf(row: TokenRow | undefined): StoredTokens | undefined {
  if (!row) return undefined;
  return { issuer: row.issuer, tokens: parse(row.tokens_json), expiresAt: row.expires_at ?? undefined, savedAt: row.saved_at };
}

function pendingOf(row: PendingRow): PendingSignIn {
  return { server: row.server, authHash: row.auth_hash, codeVerifier: row.code_verifier ?? undefined, expiresAt: row.expires_at };
}
