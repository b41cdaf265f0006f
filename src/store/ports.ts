import type { Tool } from '@modelcontextprotocol/client';

/**
 * What the daemon keeps between runs, as interfaces a backend implements: SQLite (the
 * `Sqlite…Store` classes beside this file, the default) and PostgreSQL (`pg/`, issue #28). Every
 * method returns a promise, because a networked backend cannot answer synchronously; the SQLite
 * stores do their work at the call and return settled promises, so nothing waits on them.
 *
 * The rules every backend keeps:
 * - **No method rejects.** A failing read resolves to a miss, a failing write is logged (by key,
 *   never by value) and resolves. A store only ever makes the daemon faster or keeps a sign-in;
 *   its failure must not fail anything else.
 * - **Writes apply in the order they were called**, whether or not the caller awaited the one
 *   before: a caller may start a write in the background and read after it.
 * - **After `close()`** (where there is one) reads miss and writes are dropped; `close()` is
 *   idempotent and resolves once the writes in flight are done.
 *
 * Not here: the per-daemon file of stdio children (child-records.ts). It names processes of this
 * machine, must work without any database, and is never shared.
 */

// --- tool cache -----------------------------------------------------------------------------

/**
 * Bump when the stored shape of a tool list changes meaning; older entries then miss instead of
 * being misread, and the next successful `tools/list` overwrites them.
 */
export const CACHE_FORMAT_VERSION = 1;

/** A list older than this is not served: the server has likely changed since. */
export const CACHE_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

export interface CachedToolList {
  server: string;
  configHash: string;
  formatVersion: number;
  /** The raw definitions as the server listed them. */
  tools: Tool[];
  /** When the list was written, in ms since the epoch. */
  cachedAt: number;
  /** The caching hints a modern-era server sent with the list. */
  hints?: ListHints;
}

/** Caching hints of a 2026-07-28 list result (SEP-2549). */
export interface ListHints {
  ttlMs?: number;
  cacheScope?: 'public' | 'private';
}

/** A protocol-era verdict (the SDK's `prior`), with when it was reached. */
export interface StoredVerdict {
  verdict: { kind: 'legacy' } | { kind: 'modern'; discover: Record<string, unknown> };
  probedAt: number;
}

/**
 * The last known tool list and protocol-era verdict per server and config hash (SPEC §5). The
 * list and the verdict of a server are independent: deleting one keeps the other.
 */
export interface ToolCacheStore {
  /** The cached list, or `undefined` when absent, empty, expired or written for another config. */
  get(server: string, configHash: string): Promise<CachedToolList | undefined>;
  /** Replaces the server's list; an empty list removes it. */
  put(server: string, configHash: string, tools: readonly Tool[], hints?: ListHints): Promise<void>;
  delete(server: string): Promise<void>;
  /** The era verdict kept for this config, or `undefined` (absent, or for another config). */
  getVerdict(server: string, configHash: string): Promise<StoredVerdict | undefined>;
  putVerdict(server: string, configHash: string, verdict: StoredVerdict['verdict']): Promise<void>;
  deleteVerdict(server: string): Promise<void>;
  /** Releases the backend (the SQLite store closes its connection). */
  close(): Promise<void>;
}

// --- tool pins -----------------------------------------------------------------------------

/** The definition a tool was served with (issue #22 pinning): its hash and the parts hashed. */
export interface ToolPin {
  /** The server's own name of the tool. */
  tool: string;
  /** sha256 of the canonical JSON of `definition`. */
  hash: string;
  /** description, title, inputSchema, outputSchema, annotations, as listed. */
  definition: Record<string, unknown>;
  /** When it was pinned, in ms since the epoch. */
  pinnedAt: number;
}

/**
 * The pinned tool definitions per server: what a server's tools were last served (or approved)
 * as. Kept by server name across config edits and restarts, so a changed tool stays held.
 */
export interface ToolPinStore {
  /** Every pin of the server; empty when it was never listed. */
  pinsOf(server: string): Promise<ToolPin[]>;
  /** Adds or replaces these pins of the server (by tool name). */
  put(server: string, pins: readonly ToolPin[]): Promise<void>;
}

// --- daemon state ---------------------------------------------------------------------------

/**
 * Small named values the daemon keeps between runs (its instance id per port, …). A write that
 * cannot be kept is still answered for the rest of this run.
 */
export interface StateStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * Stores `value` unless the key already has one, and resolves with the value stored: of
   * several daemons sharing the store that claim the same key at once, all get the same answer
   * (the cluster's shared sealing key lives here). When the store cannot answer, the value this
   * process knows for the key, else `value` (kept for this run).
   */
  claim(key: string, value: string): Promise<string>;
}

// --- stored credentials ---------------------------------------------------------------------

/**
 * The credentials an embedder stores per server (SPEC §3 "stored credentials"): a token the
 * daemon sends as `Authorization: Bearer …` to an http/sse server, or as `OAUTH_ACCESS_TOKEN`
 * to a stdio one. Never logged.
 */
export interface CredentialStore {
  get(server: string): Promise<string | undefined>;
  put(server: string, token: string, now: number): Promise<void>;
  delete(server: string): Promise<void>;
}

// --- OAuth sign-ins -------------------------------------------------------------------------

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

export interface StoredDiscovery {
  state: Record<string, unknown> | undefined;
  resourceUrl: string | undefined;
}

/**
 * What OAuth upstreams keep between runs (issue #16): client registrations per authorization
 * server (`issuer`), tokens, discovery state and the pending sign-ins (by the hash of their
 * `state`, with the PKCE verifier). Rows are keyed by server and the hash of the settings a
 * sign-in depends on (`authHash`), so an edit to those forgets the sign-in. Values are opaque
 * JSON to the store.
 */
export interface OAuthStore {
  getClient(key: OAuthKey, issuer: string): Promise<StoredClient | undefined>;
  /** Every registration of this server, by issuer (a configured client id is bound to one). */
  clientsOf(key: OAuthKey): Promise<Array<StoredClient & { issuer: string }>>;
  putClient(key: OAuthKey, issuer: string, info: Record<string, unknown>, origin: ClientOrigin, now: number): Promise<void>;
  /** The authorization server said it does not know our client: register afresh next time. */
  deleteClients(key: OAuthKey): Promise<void>;

  getTokens(key: OAuthKey, issuer: string): Promise<StoredTokens | undefined>;
  /** The tokens saved last, whatever their issuer: what the next request to the server carries. */
  latestTokens(key: OAuthKey): Promise<StoredTokens | undefined>;
  putTokens(key: OAuthKey, issuer: string, tokens: Record<string, unknown>, expiresAt: number | undefined, now: number): Promise<void>;
  deleteTokens(key: OAuthKey, issuer: string): Promise<void>;
  deleteAllTokens(key: OAuthKey): Promise<void>;

  /** Discovery state and resource URL; each is written on its own and keeps the other. */
  getDiscovery(key: OAuthKey): Promise<StoredDiscovery>;
  putDiscovery(key: OAuthKey, state: Record<string, unknown> | undefined, now: number): Promise<void>;
  putResourceUrl(key: OAuthKey, resourceUrl: string, now: number): Promise<void>;
  deleteDiscovery(key: OAuthKey): Promise<void>;

  /** Records a sign-in started with the `state` whose hash is given; expired ones are dropped. */
  addPending(stateHash: string, key: OAuthKey, now: number, expiresAt: number): Promise<void>;
  setVerifier(stateHash: string, codeVerifier: string): Promise<void>;
  /** Looks a pending sign-in up without using it. */
  peekPending(stateHash: string, now: number): Promise<PendingSignIn | undefined>;
  /**
   * Takes a pending sign-in out, atomically, so its `state` can never be used twice (not even by
   * two daemons sharing the store). Undefined when unknown, already taken or expired (an expired
   * one is deleted all the same).
   */
  takePending(stateHash: string, now: number): Promise<PendingSignIn | undefined>;

  /** `logout`: every token and pending sign-in of the server, whatever its settings hash. */
  forgetSignIn(server: string): Promise<void>;
  /**
   * Runs a token refresh of this sign-in so that daemons sharing the store refresh it one at a
   * time (PostgreSQL: an advisory lock); `refresh` re-reads the tokens first and uses what
   * another daemon saved meanwhile. Optional: a store of one process runs `refresh` as is. It
   * resolves or rejects as `refresh` does.
   */
  withRefreshLock?<T>(key: OAuthKey, refresh: () => Promise<T>): Promise<T>;
  /** Releases what this store opened (the SQLite one closes an in-memory fallback connection). */
  close(): Promise<void>;
}

// The ports of issue #22 (agents and their keys, the audit log) live beside this file.
export * from './access-ports.js';
