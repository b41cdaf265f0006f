import pg from 'pg';
import { errorMessage } from '../../errors.js';
import type { StoreLogger } from '../db.js';
import { holdConnection, type HeldConnection } from './held-connection.js';
import { databaseTarget, withoutPassword } from './pg-url.js';

/** How soon after an outage starts the database is first probed. */
const FIRST_PROBE_MS = 100;

/** bigint columns (ms timestamps, audit ids) come back as numbers: they stay far below 2^53. */
const INT8_OID = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
};

export interface PgBackendOptions {
  logger?: StoreLogger;
  /** How long a query waits for a connection before it fails (and the store misses). @default 5000 */
  connectTimeoutMs?: number;
  /** While the database is unreachable, how often it is probed so the warning clears on return. @default 2000 */
  probeIntervalMs?: number;
  /**
   * While it is reachable, how often a `SELECT 1` checks it: an outage shows in `/status` even
   * when no store is used meanwhile. 0 disables. @default 15000
   */
  checkIntervalMs?: number;
  /** @default 10 */
  maxConnections?: number;
}

/** A database outage as `/status` shows it. */
interface Outage {
  since: number;
  message: string;
}

/**
 * The pool every PostgreSQL store shares, and what they share about it: whether the database is
 * reachable (a failed statement opens an outage, the next success — a store's or the probe's —
 * closes it), and the guards that turn a failure into a miss or a logged write (never a
 * rejection, ports.ts). It never logs a value or the URL's password.
 */
export class PgBackend {
  readonly pool: pg.Pool;
  /** `host:port/database`: how logs and warnings name the store. */
  readonly target: string;
  readonly #url: string;
  /** Where the stores log (warnings by key, never by value). */
  readonly log: StoreLogger | undefined;
  readonly #probeIntervalMs: number;
  readonly #checkIntervalMs: number;
  #outage: Outage | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closing: Promise<void> | undefined;
  readonly #onReachable = new Set<() => void>();

  constructor(url: string, options: PgBackendOptions = {}) {
    this.#url = url;
    this.log = options.logger;
    this.#probeIntervalMs = options.probeIntervalMs ?? 2000;
    this.#checkIntervalMs = options.checkIntervalMs ?? 15_000;
    this.target = databaseTarget(url);
    this.pool = new pg.Pool({
      connectionString: url,
      types,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      // Idle connections are the ones a restarted server kills; they are let go soon anyway.
      idleTimeoutMillis: 10_000,
      allowExitOnIdle: true,
    });
    // An idle client whose server went away emits here; unhandled, it would end the process.
    this.pool.on('error', (err) => this.#failed('idle connection', err));
    this.#schedule();
  }

  get closed(): boolean {
    return this.#closing !== undefined;
  }

  /** The store's live warnings: one line while the database is unreachable, else none. */
  warnings(): string[] {
    if (!this.#outage) return [];
    const since = new Date(this.#outage.since).toISOString();
    return [`PostgreSQL store ${this.target} unreachable since ${since} (${this.#outage.message}); serving from memory until it returns`];
  }

  /**
   * Runs one statement; throws on failure (callers use `read` / `write`). A `name` prepares it
   * once per connection (for a statement on the request path: planned once, not per call).
   */
  async query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = [], name?: string): Promise<pg.QueryResult<R>> {
    try {
      const result = await this.pool.query<R>(name === undefined ? { text: sql, values: params } : { name, text: sql, values: params });
      this.#succeeded();
      return result;
    } catch (err) {
      this.#failed('query', err);
      throw err;
    }
  }

  /** Runs `fn` in one transaction on one connection; throws on failure, after a rollback. */
  async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let held: HeldConnection;
    try {
      held = await this.hold();
    } catch (err) {
      this.#failed('connect', err);
      throw err;
    }
    const { client } = held;
    let broken: unknown;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      this.#succeeded();
      return result;
    } catch (err) {
      broken = err;
      await client.query('ROLLBACK').catch(() => undefined);
      this.#failed('transaction', err);
      throw err;
    } finally {
      // A connection that failed mid-transaction may be dead: destroy it rather than reuse it.
      held.release(broken instanceof Error ? broken : undefined);
    }
  }

  /** One connection held for several statements (held-connection.ts); losing it opens an outage. */
  hold(): Promise<HeldConnection> {
    return holdConnection(this.pool, (err) => this.#failed('held connection', err));
  }

  /**
   * False while an outage is open: stores then answer from memory at once instead of waiting for
   * a connection that may take the whole connect timeout to fail (the probe reopens the way).
   */
  get reachable(): boolean {
    return this.#outage === undefined;
  }

  /** Calls `listener` each time an outage ends (a store then writes what it kept in memory). */
  onReachable(listener: () => void): void {
    this.#onReachable.add(listener);
  }

  /** A read that resolves `fallback` (and logs by `by`, never by value) when it fails or after close. */
  async read<T>(what: string, by: Record<string, unknown>, fallback: T, run: () => Promise<T>): Promise<T> {
    if (this.closed) return fallback;
    if (!this.reachable) {
      // The outage itself was logged once; each read it costs is detail.
      this.log?.debug({ ...by }, `${what} skipped: store unreachable`);
      return fallback;
    }
    try {
      return await run();
    } catch (err) {
      this.log?.warn({ ...by, err: this.#clean(err) }, `${what} failed`);
      return fallback;
    }
  }

  /**
   * A read that remembers its answer in `known` under `id`, and answers from there when the
   * database fails: what this process last saw is better than nothing during an outage.
   */
  async recall<T>(known: Map<string, T>, id: string, what: string, by: Record<string, unknown>, fallback: T, run: () => Promise<T>): Promise<T> {
    const failed = Symbol('failed');
    const found = await this.read<T | typeof failed>(what, by, failed, run);
    if (found === failed) return known.has(id) ? (known.get(id) as T) : fallback;
    known.set(id, found);
    return found;
  }

  /** A write that resolves either way; false when it was not kept (failed, or after close). */
  async write(what: string, by: Record<string, unknown>, run: () => Promise<unknown>): Promise<boolean> {
    if (this.closed) return false;
    if (!this.reachable) {
      this.log?.warn({ ...by }, `${what} dropped: store unreachable`);
      return false;
    }
    try {
      await run();
      return true;
    } catch (err) {
      this.log?.warn({ ...by, err: this.#clean(err) }, `${what} failed`);
      return false;
    }
  }

  /** Ends the pool once. Joinable. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      clearTimeout(this.#timer);
      await this.pool.end().catch(() => undefined);
    })();
    return this.#closing;
  }

  /** `SELECT 1` past the outage fast path (it is what ends an outage). */
  async #probeQuery(): Promise<void> {
    try {
      await this.pool.query('SELECT 1');
      this.#succeeded();
    } catch (err) {
      this.#failed('probe', err);
    }
  }

  #clean(err: unknown): string {
    return withoutPassword(errorMessage(err), this.#url);
  }

  #failed(what: string, err: unknown): void {
    if (!isOutage(err) || this.#outage) return;
    this.#outage = { since: Date.now(), message: this.#clean(err) };
    this.log?.warn({ store: this.target, what, err: this.#outage.message }, 'PostgreSQL store unreachable; serving from memory');
    // The first probe comes soon: one connection killed on its own is no outage worth waiting out.
    this.#schedule(Math.min(FIRST_PROBE_MS, this.#probeIntervalMs));
  }

  #succeeded(): void {
    if (!this.#outage) return;
    this.#outage = undefined;
    this.log?.warn({ store: this.target }, 'PostgreSQL store reachable again');
    this.#schedule();
    for (const listener of this.#onReachable) listener();
  }

  /** One timer: the probe while the database is away, the slower check while it is there. */
  #schedule(first?: number): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const delay = first ?? (this.#outage ? this.#probeIntervalMs : this.#checkIntervalMs);
    if (this.closed || delay <= 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      // query() records the outcome; the next timer is set by it, or here when nothing changed.
      this.#probeQuery().then(
        () => this.#timer ?? this.#schedule(),
        () => this.#timer ?? this.#schedule(),
      );
    }, delay);
    this.#timer.unref();
  }
}

/**
 * Errors that say the database (not our statement) is the problem: no connection, a connection
 * lost, a server shutting down or refusing connections. A constraint error is not an outage.
 */
function isOutage(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    // 08: connection exception; 57P: operator intervention (shutdown, terminated); 53: resources;
    // 3D000: database gone; 55000 covers "not currently accepting connections".
    if (/^(08|57P|53|3D000|55000)/.test(code)) return true;
    if (/^E[A-Z]+$/.test(code)) return true; // ECONNREFUSED, ECONNRESET, ETIMEDOUT, ENOTFOUND…
    return false;
  }
  return /terminated|timeout|Connection|ECONN|not queryable/i.test(errorMessage(err));
}

/**
 * Keeps a store's writes in the order they were called (ports.ts): each write starts when the
 * one before it has settled, and a read starts once the writes called before it have.
 */
export class WriteOrder {
  #tail: Promise<unknown> = Promise.resolve();

  write<T>(run: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(run);
    this.#tail = next.catch(() => undefined);
    return next;
  }

  read<T>(run: () => Promise<T>): Promise<T> {
    return this.#tail.then(run);
  }

  /** Resolves once every write called so far has settled. */
  drained(): Promise<void> {
    return this.#tail.then(() => undefined);
  }
}
