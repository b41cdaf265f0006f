import { errorMessage } from '../../errors.js';
import type { ClientOrigin, OAuthKey, OAuthStore, PendingSignIn, StoredClient, StoredDiscovery, StoredTokens } from '../ports.js';
import { WriteOrder, type PgBackend } from './pg-backend.js';
import { PgCredentialStore } from './pg-credential-store.js';
import { clientOf, discoveryOf, pendingOf, tokensOf, type ClientRow, type DiscoveryRow, type PendingRow, type TokenRow } from '../store-rows.js';

const KEY = 'server = $1 AND auth_hash = $2';
const TOKEN_COLUMNS = 'issuer, tokens_json, expires_at, saved_at';

/** How long a refresh waits for another replica's refresh of the same sign-in. */
const REFRESH_LOCK_TIMEOUT = '30s';

/**
 * The OAuth store (ports.ts `OAuthStore`) in PostgreSQL, shared by every replica: a sign-in
 * done on one serves calls on all. `takePending` is one `DELETE … RETURNING`, so a `state` is
 * used once across replicas. Tokens, registrations and discovery this process last read or
 * wrote are remembered, so requests keep their bearer while the database is away.
 */
export class PgOAuthStore implements OAuthStore {
  readonly credentials: PgCredentialStore;
  readonly #pg: PgBackend;
  readonly #order = new WriteOrder();
  readonly #known = new Map<string, unknown>();

  constructor(backend: PgBackend) {
    this.#pg = backend;
    this.credentials = new PgCredentialStore(backend);
  }

  // --- client registrations ---------------------------------------------------------------

  getClient(key: OAuthKey, issuer: string): Promise<StoredClient | undefined> {
    return this.#recall(`client\0${id(key)}\0${issuer}`, 'client read', key, undefined, async () => {
      const row = (await this.#pg.query<Omit<ClientRow, 'issuer'>>(`SELECT client_json, origin FROM oauth_client WHERE ${KEY} AND issuer = $3`, [key.server, key.authHash, issuer]))
        .rows[0];
      return row && clientOf(row);
    });
  }

  clientsOf(key: OAuthKey): Promise<Array<StoredClient & { issuer: string }>> {
    return this.#recall(`clients\0${id(key)}`, 'client read', key, [], async () =>
      (await this.#pg.query<ClientRow>(`SELECT issuer, client_json, origin FROM oauth_client WHERE ${KEY}`, [key.server, key.authHash])).rows.map((row) => ({
        issuer: row.issuer,
        ...clientOf(row),
      })),
    );
  }

  putClient(key: OAuthKey, issuer: string, info: Record<string, unknown>, origin: ClientOrigin, now: number): Promise<void> {
    return this.#write(
      'client write',
      key,
      `
      INSERT INTO oauth_client (server, auth_hash, issuer, client_json, origin, saved_at) VALUES ($1, $2, $3, $4, $5, $6)
      ON CONFLICT (server, auth_hash, issuer) DO UPDATE SET client_json = excluded.client_json, origin = excluded.origin, saved_at = excluded.saved_at`,
      [key.server, key.authHash, issuer, JSON.stringify(info), origin, now],
    );
  }

  deleteClients(key: OAuthKey): Promise<void> {
    this.#forget(`client\0${id(key)}\0`, `clients\0${id(key)}`);
    return this.#write('client delete', key, `DELETE FROM oauth_client WHERE ${KEY}`, [key.server, key.authHash]);
  }

  // --- tokens -----------------------------------------------------------------------------

  getTokens(key: OAuthKey, issuer: string): Promise<StoredTokens | undefined> {
    return this.#recall(`token\0${id(key)}\0${issuer}`, 'token read', key, undefined, async () =>
      tokensOf((await this.#pg.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM oauth_token WHERE ${KEY} AND issuer = $3`, [key.server, key.authHash, issuer])).rows[0]),
    );
  }

  latestTokens(key: OAuthKey): Promise<StoredTokens | undefined> {
    return this.#recall(`latest\0${id(key)}`, 'token read', key, undefined, async () =>
      tokensOf(
        (await this.#pg.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM oauth_token WHERE ${KEY} ORDER BY saved_at DESC, seq DESC LIMIT 1`, [key.server, key.authHash])).rows[0],
      ),
    );
  }

  putTokens(key: OAuthKey, issuer: string, tokens: Record<string, unknown>, expiresAt: number | undefined, now: number): Promise<void> {
    // Remembered at once: a refresh made while the database is away is still used by this process.
    const stored: StoredTokens = { issuer, tokens, expiresAt, savedAt: now };
    this.#known.set(`token\0${id(key)}\0${issuer}`, stored);
    this.#known.set(`latest\0${id(key)}`, stored);
    return this.#write(
      'token write',
      key,
      `
      INSERT INTO oauth_token (server, auth_hash, issuer, tokens_json, expires_at, saved_at) VALUES ($1, $2, $3, $4, $5, $6)
      ON CONFLICT (server, auth_hash, issuer) DO UPDATE SET
        tokens_json = excluded.tokens_json, expires_at = excluded.expires_at, saved_at = excluded.saved_at, seq = excluded.seq`,
      [key.server, key.authHash, issuer, JSON.stringify(tokens), expiresAt ?? null, now],
    );
  }

  deleteTokens(key: OAuthKey, issuer: string): Promise<void> {
    this.#forget(`token\0${id(key)}\0${issuer}`, `latest\0${id(key)}`);
    return this.#write('token delete', key, `DELETE FROM oauth_token WHERE ${KEY} AND issuer = $3`, [key.server, key.authHash, issuer]);
  }

  deleteAllTokens(key: OAuthKey): Promise<void> {
    this.#forget(`token\0${id(key)}\0`, `latest\0${id(key)}`);
    return this.#write('token delete', key, `DELETE FROM oauth_token WHERE ${KEY}`, [key.server, key.authHash]);
  }

  // --- discovery --------------------------------------------------------------------------

  getDiscovery(key: OAuthKey): Promise<StoredDiscovery> {
    return this.#recall(`discovery\0${id(key)}`, 'discovery read', key, { state: undefined, resourceUrl: undefined }, async () =>
      discoveryOf((await this.#pg.query<DiscoveryRow>(`SELECT state_json, resource_url FROM oauth_discovery WHERE ${KEY}`, [key.server, key.authHash])).rows[0]),
    );
  }

  putDiscovery(key: OAuthKey, state: Record<string, unknown> | undefined, now: number): Promise<void> {
    return this.#write(
      'discovery write',
      key,
      `
      INSERT INTO oauth_discovery (server, auth_hash, state_json, saved_at) VALUES ($1, $2, $3, $4)
      ON CONFLICT (server, auth_hash) DO UPDATE SET state_json = excluded.state_json, saved_at = excluded.saved_at`,
      [key.server, key.authHash, state === undefined ? null : JSON.stringify(state), now],
    );
  }

  putResourceUrl(key: OAuthKey, resourceUrl: string, now: number): Promise<void> {
    return this.#write(
      'discovery write',
      key,
      `
      INSERT INTO oauth_discovery (server, auth_hash, resource_url, saved_at) VALUES ($1, $2, $3, $4)
      ON CONFLICT (server, auth_hash) DO UPDATE SET resource_url = excluded.resource_url, saved_at = excluded.saved_at`,
      [key.server, key.authHash, resourceUrl, now],
    );
  }

  deleteDiscovery(key: OAuthKey): Promise<void> {
    this.#forget(`discovery\0${id(key)}`);
    return this.#write('discovery delete', key, `DELETE FROM oauth_discovery WHERE ${KEY}`, [key.server, key.authHash]);
  }

  // --- pending sign-ins -------------------------------------------------------------------

  addPending(stateHash: string, key: OAuthKey, now: number, expiresAt: number): Promise<void> {
    return this.#order.write(async () => {
      await this.#pg.write('oauth pending write', { server: key.server }, () =>
        this.#pg.transaction(async (client) => {
          await client.query('DELETE FROM oauth_pending WHERE expires_at <= $1', [now]);
          await client.query('INSERT INTO oauth_pending (state_hash, server, auth_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)', [
            stateHash,
            key.server,
            key.authHash,
            now,
            expiresAt,
          ]);
        }),
      );
    });
  }

  setVerifier(stateHash: string, codeVerifier: string): Promise<void> {
    return this.#write('pending write', { server: '', authHash: '' }, 'UPDATE oauth_pending SET code_verifier = $1 WHERE state_hash = $2', [codeVerifier, stateHash]);
  }

  peekPending(stateHash: string, now: number): Promise<PendingSignIn | undefined> {
    return this.#order.read(async () => {
      const row = await this.#pg.read(
        'oauth pending read',
        {},
        undefined,
        async () => (await this.#pg.query<PendingRow>('SELECT server, auth_hash, code_verifier, expires_at FROM oauth_pending WHERE state_hash = $1', [stateHash])).rows[0],
      );
      return row && row.expires_at > now ? pendingOf(row) : undefined;
    });
  }

  takePending(stateHash: string, now: number): Promise<PendingSignIn | undefined> {
    // One statement: of two takes (on any replicas), only one gets the row back.
    return this.#order.write(async () => {
      const row = await this.#pg.read(
        'oauth pending read',
        {},
        undefined,
        async () =>
          (await this.#pg.query<PendingRow>('DELETE FROM oauth_pending WHERE state_hash = $1 RETURNING server, auth_hash, code_verifier, expires_at', [stateHash])).rows[0],
      );
      return row && row.expires_at > now ? pendingOf(row) : undefined;
    });
  }

  // --- forgetting -------------------------------------------------------------------------

  forgetSignIn(server: string): Promise<void> {
    for (const name of [...this.#known.keys()]) {
      if ((name.startsWith('token\0') || name.startsWith('latest\0')) && name.split('\0')[1] === server) this.#known.delete(name);
    }
    return this.#order.write(async () => {
      await this.#pg.write('oauth logout', { server }, () =>
        this.#pg.transaction(async (client) => {
          await client.query('DELETE FROM oauth_token WHERE server = $1', [server]);
          await client.query('DELETE FROM oauth_pending WHERE server = $1', [server]);
        }),
      );
    });
  }

  /**
   * Runs `refresh` holding a transaction-level advisory lock on the sign-in (server and settings
   * hash), so one replica refreshes at a time; the caller re-reads the tokens inside, and uses
   * what another replica saved meanwhile. Without a connection (or after waiting 30 s) it runs
   * unlocked: a second refresh is better than none.
   */
  async withRefreshLock<T>(key: OAuthKey, refresh: () => Promise<T>): Promise<T> {
    if (!this.#pg.reachable) return refresh();
    let held;
    try {
      held = await this.#pg.hold();
    } catch {
      return refresh();
    }
    const { client } = held;
    let locked = false;
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL lock_timeout = '${REFRESH_LOCK_TIMEOUT}'`);
      // Keyed by the JSON of the sign-in's key: text sent to PostgreSQL may not hold a NUL.
      await client.query("SELECT pg_advisory_xact_lock(hashtext('switchboard:oauth-refresh'), hashtext($1))", [JSON.stringify([key.server, key.authHash])]);
      locked = true;
    } catch (err) {
      this.#pg.log?.warn({ server: key.server, err: errorMessage(err) }, 'oauth refresh lock not taken; refreshing without it');
      await client.query('ROLLBACK').catch(() => undefined);
    }
    try {
      return await refresh();
    } finally {
      if (locked) await client.query('COMMIT').catch(() => undefined);
      held.release();
    }
  }

  /** Waits for the writes in flight; the pool is the backend's to end. */
  async close(): Promise<void> {
    await this.#order.drained();
  }

  #recall<T>(memo: string, what: string, key: OAuthKey, fallback: T, run: () => Promise<T>): Promise<T> {
    return this.#order.read(() => this.#pg.recall(this.#known as Map<string, T>, memo, `oauth ${what}`, { server: key.server }, fallback, run));
  }

  #write(what: string, key: OAuthKey, sql: string, params: unknown[]): Promise<void> {
    return this.#order.write(async () => {
      await this.#pg.write(`oauth ${what}`, { server: key.server }, () => this.#pg.query(sql, params));
    });
  }

  /** Drops remembered answers: exact names, and every name under a prefix ending in NUL. */
  #forget(...names: string[]): void {
    for (const name of names) {
      if (!name.endsWith('\0')) this.#known.delete(name);
      else for (const known of [...this.#known.keys()]) if (known.startsWith(name)) this.#known.delete(known);
    }
  }
}

function id(key: OAuthKey): string {
  return `${key.server}\0${key.authHash}`;
}
