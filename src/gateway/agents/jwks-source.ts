import { readFile } from 'node:fs/promises';
import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import type { Logger } from 'pino';
import { SwitchboardError, errorMessage } from '../../errors.js';
import type { Clock } from '../../util/clock.js';

/** How long keys are kept when the provider's answer says nothing (`Cache-Control` absent). */
export const DEFAULT_JWKS_MAX_AGE_MS = 10 * 60_000;
/** The least and most a `Cache-Control: max-age` is honoured: `no-store` must not mean a fetch per token. */
export const MIN_JWKS_MAX_AGE_MS = 60_000;
export const MAX_JWKS_MAX_AGE_MS = 24 * 60 * 60_000;
/** Between two refreshes asked for by an unknown `kid`: a flood of made-up kids costs one fetch. */
export const JWKS_REFRESH_COOLDOWN_MS = 30_000;
const FETCH_TIMEOUT_MS = 5_000;
const MAX_JWKS_BYTES = 1024 * 1024;

export interface JwksSourceOptions {
  /** `agentAuth.jwt.jwksUrl`, or … */
  url?: string;
  /** … `agentAuth.jwt.jwksFile`. */
  file?: string;
  clock: Pick<Clock, 'now'>;
  logger: Pick<Logger, 'warn'>;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
}

interface Loaded {
  keys: JWTVerifyGetKey;
  /** When to fetch again before using them. */
  freshUntil: number;
  etag?: string;
}

/**
 * The identity provider's signing keys (issue #40 item 4): fetched on first use, kept as long as
 * the answer's `Cache-Control: max-age` says (within MIN/MAX), revalidated with `If-None-Match`,
 * and fetched again early when a token names a `kid` they lack — at most once per cooldown, so
 * tokens with made-up kids cannot make the daemon hammer the provider. One fetch at a time:
 * concurrent callers share it. Stale keys keep serving when a refetch fails.
 */
export class JwksSource {
  readonly #options: JwksSourceOptions;
  #loaded: Loaded | undefined;
  #inFlight: Promise<Loaded> | undefined;
  #lastRefreshAt = Number.NEGATIVE_INFINITY;
  #fetches = 0;

  constructor(options: JwksSourceOptions) {
    this.#options = options;
  }

  /** Fetches (or file reads) made so far. */
  get fetches(): number {
    return this.#fetches;
  }

  /** The keys to verify with: fresh ones, fetched first when there are none or they are stale. */
  async keys(): Promise<JWTVerifyGetKey> {
    const loaded = this.#loaded;
    if (loaded && loaded.freshUntil > this.#options.clock.now()) return loaded.keys;
    return (await this.#load()).keys;
  }

  /**
   * A token named a `kid` the keys lack: fetch again (or join the fetch under way), unless one
   * such refresh ran within the cooldown. Resolves with the keys to retry with, or undefined.
   */
  async refreshForUnknownKid(): Promise<JWTVerifyGetKey | undefined> {
    if (this.#inFlight) return (await this.#inFlight).keys;
    const now = this.#options.clock.now();
    if (now - this.#lastRefreshAt < JWKS_REFRESH_COOLDOWN_MS) return undefined;
    this.#lastRefreshAt = now;
    return (await this.#load()).keys;
  }

  #load(): Promise<Loaded> {
    this.#inFlight ??= this.#fetch()
      .then((loaded) => (this.#loaded = loaded))
      .catch((err: unknown) => {
        this.#options.logger.warn({ err: errorMessage(err), jwks: this.#options.url ?? this.#options.file }, 'fetching the JWKS failed');
        // Keys that worked keep working until the provider answers again.
        if (this.#loaded) return this.#loaded;
        throw new SwitchboardError('JWKS_UNAVAILABLE', undefined, { cause: err });
      })
      .finally(() => (this.#inFlight = undefined));
    return this.#inFlight;
  }

  async #fetch(): Promise<Loaded> {
    this.#fetches += 1;
    const { url, file, clock } = this.#options;
    if (url === undefined) return this.#loadedFrom(JSON.parse(await readFile(file as string, 'utf8')), DEFAULT_JWKS_MAX_AGE_MS);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.#loaded?.etag !== undefined) headers['if-none-match'] = this.#loaded.etag;
    const res = await (this.#options.fetch ?? fetch)(url, { headers, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' });
    const maxAge = maxAgeOf(res.headers.get('cache-control'));
    if (res.status === 304 && this.#loaded) {
      await res.body?.cancel();
      return { ...this.#loaded, freshUntil: clock.now() + maxAge };
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`the JWKS answered HTTP ${res.status}`);
    }
    const text = await res.text();
    if (text.length > MAX_JWKS_BYTES) throw new Error('the JWKS is over 1 MiB');
    return this.#loadedFrom(JSON.parse(text), maxAge, res.headers.get('etag') ?? undefined);
  }

  #loadedFrom(jwks: unknown, maxAgeMs: number, etag?: string): Loaded {
    if (typeof jwks !== 'object' || jwks === null || !Array.isArray((jwks as { keys?: unknown }).keys)) throw new Error('the JWKS has no "keys" list');
    const keys = createLocalJWKSet(jwks as JSONWebKeySet);
    return { keys, freshUntil: this.#options.clock.now() + maxAgeMs, ...(etag !== undefined ? { etag } : {}) };
  }
}

/** How long an answer may be kept, from its `Cache-Control`, within MIN/MAX_JWKS_MAX_AGE_MS. */
export function maxAgeOf(cacheControl: string | null): number {
  if (cacheControl === null) return DEFAULT_JWKS_MAX_AGE_MS;
  const directives = cacheControl
    .toLowerCase()
    .split(',')
    .map((part) => part.trim());
  if (directives.includes('no-store') || directives.includes('no-cache')) return MIN_JWKS_MAX_AGE_MS;
  const maxAge = directives.find((part) => part.startsWith('max-age='));
  const seconds = maxAge === undefined ? Number.NaN : Number(maxAge.slice('max-age='.length));
  if (!Number.isFinite(seconds) || seconds < 0) return DEFAULT_JWKS_MAX_AGE_MS;
  return Math.min(MAX_JWKS_MAX_AGE_MS, Math.max(MIN_JWKS_MAX_AGE_MS, seconds * 1000));
}
