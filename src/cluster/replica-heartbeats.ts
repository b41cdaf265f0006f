import type pg from 'pg';
import type { Logger } from 'pino';
import { errorMessage } from '../errors.js';
import type { ReplicaTraffic } from './replica-traffic.js';

/**
 * Which replicas are alive (issue #28 item 2): each one writes a row of the store's `replicas`
 * table every `intervalMs` — where it is reached, when it started, its view of the servers —
 * and `/status` lists the rows. A row whose heartbeat is older than three intervals is a replica
 * that stopped without saying so (killed, partitioned): listed as not live, and removed for good
 * after an hour. A replica that stops cleanly removes its own row.
 */

/** @default 2000 */
export const HEARTBEAT_INTERVAL_MS = 2_000;
/** A replica silent this many intervals is not live. */
const LIVE_INTERVALS = 3;
/** Rows silent longer than this are deleted by whichever replica beats next. */
const FORGET_AFTER_MS = 60 * 60_000;

/** One server as a replica sees it, in its heartbeat. */
export interface ReplicaServerView {
  name: string;
  status: string;
  toolCount: number;
}

export interface ReplicaInfo {
  id: string;
  /** Where other replicas reach this one (forwarded requests). */
  url: string;
  startedAt: string;
  heartbeatAt: string;
  /** The heartbeat is recent: the replica runs. */
  live: boolean;
  /** The row is this process's. */
  self: boolean;
  servers: ReplicaServerView[];
  /** Its traffic at its last beat (replica-traffic.ts); null from a replica that does not say. */
  traffic: ReplicaTraffic | null;
}

export interface ReplicaHeartbeatsOptions {
  pool: pg.Pool;
  id: string;
  /** Where the others reach this replica; asked at each beat (known once the daemon listens). */
  url: () => string;
  /** Its servers right now, written with every beat. */
  view: () => ReplicaServerView[];
  /** Its traffic since the last beat, written with every beat (issue #43). @default not written */
  traffic?: () => ReplicaTraffic;
  logger: Pick<Logger, 'warn' | 'info'>;
  /** @default HEARTBEAT_INTERVAL_MS */
  intervalMs?: number;
  /** @default Date.now */
  now?: () => number;
}

interface ReplicaRow {
  id: string;
  url: string;
  started_at: string;
  heartbeat_at: string;
  info: { servers?: ReplicaServerView[]; traffic?: ReplicaTraffic };
}

export class ReplicaHeartbeats {
  readonly #options: ReplicaHeartbeatsOptions;
  readonly #interval: number;
  readonly #now: () => number;
  readonly #startedAt: number;
  #timer: NodeJS.Timeout | undefined;
  #failing = false;
  /** The last list read, answered while the database is away. */
  #known: ReplicaInfo[] = [];
  #readAt = -Infinity;
  #beating: Promise<void> = Promise.resolve();
  #reading: Promise<ReplicaInfo[]> | undefined;

  constructor(options: ReplicaHeartbeatsOptions) {
    this.#options = options;
    this.#interval = options.intervalMs ?? HEARTBEAT_INTERVAL_MS;
    this.#now = options.now ?? Date.now;
    this.#startedAt = this.#now();
  }

  /** Writes the first beat (awaited: the replica is listed by the time it serves) and keeps beating. */
  async start(): Promise<void> {
    await this.beat();
    this.#timer = setInterval(() => void this.beat(), this.#interval);
    this.#timer.unref();
  }

  /** One heartbeat now. Never rejects; a failure is logged once until a beat succeeds again. */
  beat(): Promise<void> {
    const run = async (): Promise<void> => {
      const now = this.#now();
      const { pool, id, url, view, traffic } = this.#options;
      try {
        await pool.query(
          `INSERT INTO replicas (id, url, started_at, heartbeat_at, info) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, heartbeat_at = EXCLUDED.heartbeat_at, info = EXCLUDED.info`,
          [id, url(), this.#startedAt, now, JSON.stringify({ servers: view(), ...(traffic ? { traffic: traffic() } : {}) })],
        );
        await pool.query('DELETE FROM replicas WHERE heartbeat_at < $1', [now - FORGET_AFTER_MS]);
        if (this.#failing) this.#options.logger.info('replica heartbeat written again');
        this.#failing = false;
      } catch (err) {
        if (!this.#failing) this.#options.logger.warn({ err: errorMessage(err) }, 'replica heartbeat not written');
        this.#failing = true;
      }
    };
    this.#beating = this.#beating.then(run);
    return this.#beating;
  }

  /** Every replica the store knows, this one first; the last list read when the database is away. */
  async list(): Promise<ReplicaInfo[]> {
    const now = this.#now();
    try {
      const { rows } = await this.#options.pool.query<ReplicaRow>('SELECT id, url, started_at, heartbeat_at, info FROM replicas ORDER BY started_at, id');
      this.#known = rows.map((row) => ({
        id: row.id,
        url: row.url,
        startedAt: new Date(Number(row.started_at)).toISOString(),
        heartbeatAt: new Date(Number(row.heartbeat_at)).toISOString(),
        live: now - Number(row.heartbeat_at) < LIVE_INTERVALS * this.#interval,
        self: row.id === this.#options.id,
        servers: row.info.servers ?? [],
        traffic: row.info.traffic ?? null,
      }));
      this.#readAt = now;
    } catch {
      // The last answer stands.
    }
    return [...this.#known].sort((a, b) => Number(b.self) - Number(a.self));
  }

  /**
   * The live replica with this id, if any (where a forwarded request goes). Answered from a list
   * at most half an interval old: a forwarded request must not cost a query. An id that list
   * does not hold at all is a replica started since (it writes its first beat before it serves):
   * the list is read again, else that replica's first sessions would be answered 404 elsewhere
   * (the B15 soak met one). A killed replica stays in the table for an hour, so its ids cost no read.
   */
  async find(id: string): Promise<ReplicaInfo | undefined> {
    const fresh = this.#now() - this.#readAt < this.#interval / 2;
    let replicas = fresh ? this.#known : await this.#read();
    if (fresh && !replicas.some((r) => r.id === id)) replicas = await this.#read();
    return replicas.find((r) => r.id === id && r.live);
  }

  /** `list()`, one read at a time: requests that miss together share it. */
  #read(): Promise<ReplicaInfo[]> {
    this.#reading ??= this.list().finally(() => (this.#reading = undefined));
    return this.#reading;
  }

  /** Stops beating and removes this replica's row. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#beating;
    try {
      await this.#options.pool.query('DELETE FROM replicas WHERE id = $1', [this.#options.id]);
    } catch {
      // Its row goes stale and is forgotten after an hour.
    }
  }
}
