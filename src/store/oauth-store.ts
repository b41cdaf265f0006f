import type { Database, Statement } from 'better-sqlite3';
import { errorMessage } from '../errors.js';
import { SqliteCredentialStore } from './credential-store.js';
import type { StoreLogger } from './db.js';
import type { ClientOrigin, OAuthKey, OAuthStore, PendingSignIn, StoredClient, StoredDiscovery, StoredTokens } from './ports.js';
import { clientOf, discoveryOf, pendingOf, tokensOf, type ClientRow, type DiscoveryRow, type PendingRow, type TokenRow } from './store-rows.js';

export interface OAuthStoreOptions {
  logger?: StoreLogger;
  /** Close the connection on `close()`: set when the store opened it (an in-memory fallback). */
  ownsConnection?: boolean;
}

/**
 * The SQLite OAuth store (see `OAuthStore` in ports.ts), beside the tool cache in the same 0600
 * database, plus — as `credentials` — the static credentials an embedder stores for a server
 * (SPEC §3), on the same connection. Statements are prepared once and every write is one
 * synchronous statement or transaction, run at the call.
 */
export class SqliteOAuthStore implements OAuthStore {
  /** The static credentials of SPEC §3, in the same database. */
  readonly credentials: SqliteCredentialStore;
  readonly #db: Database;
  readonly #log: StoreLogger | undefined;
  readonly #ownsConnection: boolean;
  readonly #sql: {
    getClient: Statement<[string, string, string], Omit<ClientRow, 'issuer'>>;
    putClient: Statement<[string, string, string, string, string, number]>;
    clientsOf: Statement<[string, string], ClientRow>;
    deleteClients: Statement<[string, string]>;
    deleteAllTokens: Statement<[string, string]>;
    getTokens: Statement<[string, string, string], TokenRow>;
    latestTokens: Statement<[string, string], TokenRow>;
    putTokens: Statement<[string, string, string, string, number | null, number]>;
    deleteTokens: Statement<[string, string, string]>;
    deleteServerTokens: Statement<[string]>;
    getDiscovery: Statement<[string, string], DiscoveryRow>;
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
    this.credentials = new SqliteCredentialStore(db, {
      read: (what, server, read) => this.#read(what, server, read),
      write: (what, server, write) => this.#write(what, server, write),
    });
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

  async getClient(key: OAuthKey, issuer: string): Promise<StoredClient | undefined> {
    return this.#read('client read', key.server, () => {
      const row = this.#sql.getClient.get(key.server, key.authHash, issuer);
      return row && clientOf(row);
    });
  }

  async clientsOf(key: OAuthKey): Promise<Array<StoredClient & { issuer: string }>> {
    return this.#read('client read', key.server, () => this.#sql.clientsOf.all(key.server, key.authHash).map((row) => ({ issuer: row.issuer, ...clientOf(row) }))) ?? [];
  }

  async putClient(key: OAuthKey, issuer: string, info: Record<string, unknown>, origin: ClientOrigin, now: number): Promise<void> {
    this.#write('client write', key.server, () => this.#sql.putClient.run(key.server, key.authHash, issuer, JSON.stringify(info), origin, now));
  }

  async deleteClients(key: OAuthKey): Promise<void> {
    this.#write('client delete', key.server, () => this.#sql.deleteClients.run(key.server, key.authHash));
  }

  // --- tokens -----------------------------------------------------------------------------

  async getTokens(key: OAuthKey, issuer: string): Promise<StoredTokens | undefined> {
    return this.#read('token read', key.server, () => tokensOf(this.#sql.getTokens.get(key.server, key.authHash, issuer)));
  }

  async latestTokens(key: OAuthKey): Promise<StoredTokens | undefined> {
    return this.#read('token read', key.server, () => tokensOf(this.#sql.latestTokens.get(key.server, key.authHash)));
  }

  async putTokens(key: OAuthKey, issuer: string, tokens: Record<string, unknown>, expiresAt: number | undefined, now: number): Promise<void> {
    this.#write('token write', key.server, () => this.#sql.putTokens.run(key.server, key.authHash, issuer, JSON.stringify(tokens), expiresAt ?? null, now));
  }

  async deleteTokens(key: OAuthKey, issuer: string): Promise<void> {
    this.#write('token delete', key.server, () => this.#sql.deleteTokens.run(key.server, key.authHash, issuer));
  }

  async deleteAllTokens(key: OAuthKey): Promise<void> {
    this.#write('token delete', key.server, () => this.#sql.deleteAllTokens.run(key.server, key.authHash));
  }

  // --- discovery --------------------------------------------------------------------------

  async getDiscovery(key: OAuthKey): Promise<StoredDiscovery> {
    const found = this.#read('discovery read', key.server, () => discoveryOf(this.#sql.getDiscovery.get(key.server, key.authHash)));
    return found ?? { state: undefined, resourceUrl: undefined };
  }

  async putDiscovery(key: OAuthKey, state: Record<string, unknown> | undefined, now: number): Promise<void> {
    this.#write('discovery write', key.server, () => this.#sql.putDiscovery.run(key.server, key.authHash, state === undefined ? null : JSON.stringify(state), now));
  }

  async putResourceUrl(key: OAuthKey, resourceUrl: string, now: number): Promise<void> {
    this.#write('discovery write', key.server, () => this.#sql.putResource.run(key.server, key.authHash, resourceUrl, now));
  }

  async deleteDiscovery(key: OAuthKey): Promise<void> {
    this.#write('discovery delete', key.server, () => this.#sql.deleteDiscovery.run(key.server, key.authHash));
  }

  // --- pending sign-ins -------------------------------------------------------------------

  async addPending(stateHash: string, key: OAuthKey, now: number, expiresAt: number): Promise<void> {
    this.#write('pending write', key.server, () =>
      this.#db.transaction(() => {
        this.#sql.prunePending.run(now);
        this.#sql.putPending.run(stateHash, key.server, key.authHash, now, expiresAt);
      })(),
    );
  }

  async setVerifier(stateHash: string, codeVerifier: string): Promise<void> {
    this.#write('pending write', '', () => this.#sql.setVerifier.run(codeVerifier, stateHash));
  }

  async peekPending(stateHash: string, now: number): Promise<PendingSignIn | undefined> {
    const row = this.#read('pending read', '', () => this.#sql.getPending.get(stateHash));
    return row && row.expires_at > now ? pendingOf(row) : undefined;
  }

  async takePending(stateHash: string, now: number): Promise<PendingSignIn | undefined> {
    // One transaction: two takes of the same state cannot both find it.
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

  async forgetSignIn(server: string): Promise<void> {
    this.#write('logout', server, () =>
      this.#db.transaction(() => {
        this.#sql.deleteServerTokens.run(server);
        this.#sql.deleteServerPending.run(server);
      })(),
    );
  }

  /** Closes the connection if this store opened it; the shared one is the tool cache's to close. */
  async close(): Promise<void> {
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
