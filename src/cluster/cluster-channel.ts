import type pg from 'pg';
import type { Logger } from 'pino';
import { errorMessage } from '../errors.js';
import { backoffDelay } from '../util/backoff.js';
import { ListenerSet } from '../util/listeners.js';

/**
 * The replicas' message channel (issue #28 item 2): PostgreSQL `LISTEN/NOTIFY` on the store's
 * own database, so a cluster needs no service beyond the one it already has. Every replica
 * listens on one channel; a message carries the replica it came from, and a replica ignores its
 * own. NOTIFY is delivered to the listeners connected at commit time and is not kept, so a
 * replica that was disconnected misses what was said meanwhile: on reconnect `onReconnect`
 * fires, and the cluster re-reads what it may have missed from the store.
 */

/** The channel name every replica listens on. */
export const CLUSTER_CHANNEL = 'switchboard_cluster';

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more. */
export const MAX_PAYLOAD_BYTES = 7_900;

/** Backoff between attempts to get the listening connection back. */
const RECONNECT_POLICY = { baseMs: 250, maxMs: 5_000, jitter: 0.2 };

export interface ClusterMessage {
  /** The replica that sent it. */
  from: string;
  kind: string;
  [field: string]: unknown;
}

export interface ClusterChannelOptions {
  connectionString: string;
  /** This replica: messages from it are not delivered back to it. */
  replicaId: string;
  logger: Pick<Logger, 'info' | 'warn' | 'debug'>;
  /** @default CLUSTER_CHANNEL */
  channel?: string;
}

export class ClusterChannel {
  readonly #options: ClusterChannelOptions;
  readonly #channel: string;
  readonly #listeners: ListenerSet<[ClusterMessage]>;
  readonly #reconnected = new ListenerSet<[]>();
  #client: pg.Client | undefined;
  #closed = false;
  #attempt = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Sends go one after another on their own connection, in the order they were called. */
  #sender: pg.Client | undefined;
  #sending: Promise<void> = Promise.resolve();

  constructor(options: ClusterChannelOptions) {
    this.#options = options;
    this.#channel = options.channel ?? CLUSTER_CHANNEL;
    this.#listeners = new ListenerSet((err) => options.logger.warn({ err: errorMessage(err) }, 'cluster message listener threw'));
  }

  /** Connects and listens; rejects when the first connection fails (the caller decides whether that is fatal). */
  async start(): Promise<void> {
    await this.#listen();
  }

  /** Every message another replica sends from now on. */
  onMessage(listener: (message: ClusterMessage) => void): () => void {
    return this.#listeners.add(listener);
  }

  /** After the listening connection was lost and is back: messages may have been missed. */
  onReconnect(listener: () => void): () => void {
    return this.#reconnected.add(listener);
  }

  get listening(): boolean {
    return this.#client !== undefined;
  }

  /**
   * Tells every other replica. Never rejects: a message that cannot be sent (the database is
   * away, the payload too large) is logged and dropped — each replica's own state stays right,
   * only the others learn of it late (at their next re-read).
   */
  send(message: Omit<ClusterMessage, 'from'>): Promise<void> {
    const payload = JSON.stringify({ ...message, from: this.#options.replicaId });
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
      this.#options.logger.warn({ kind: message.kind, bytes: Buffer.byteLength(payload) }, 'cluster message too large for NOTIFY; not sent');
      return Promise.resolve();
    }
    const run = async (): Promise<void> => {
      if (this.#closed) return;
      try {
        const sender = await this.#senderClient();
        await sender.query('SELECT pg_notify($1, $2)', [this.#channel, payload]);
      } catch (err) {
        this.#dropSender();
        this.#options.logger.warn({ kind: message.kind, err: errorMessage(err) }, 'cluster message not sent');
      }
    };
    this.#sending = this.#sending.then(run);
    return this.#sending;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#sending;
    const clients = [this.#client, this.#sender].filter((c): c is pg.Client => c !== undefined);
    this.#client = undefined;
    this.#sender = undefined;
    await Promise.allSettled(clients.map((c) => c.end()));
  }

  async #senderClient(): Promise<pg.Client> {
    if (this.#sender) return this.#sender;
    const client = new (await loadPg()).Client({ connectionString: this.#options.connectionString });
    client.on('error', () => this.#dropSender());
    await client.connect();
    this.#sender = client;
    return client;
  }

  #dropSender(): void {
    const sender = this.#sender;
    this.#sender = undefined;
    void sender?.end().catch(() => {});
  }

  async #listen(): Promise<void> {
    const client = new (await loadPg()).Client({ connectionString: this.#options.connectionString });
    client.on('error', (err) => this.#lost(client, err));
    client.on('end', () => this.#lost(client, new Error('connection ended')));
    client.on('notification', (note) => {
      if (note.channel !== this.#channel || note.payload === undefined) return;
      let message: ClusterMessage;
      try {
        message = JSON.parse(note.payload) as ClusterMessage;
      } catch {
        return; // not one of ours
      }
      if (typeof message.from !== 'string' || typeof message.kind !== 'string' || message.from === this.#options.replicaId) return;
      this.#listeners.emit(message);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.#channel}`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
      throw err;
    }
    if (this.#closed) {
      await client.end().catch(() => {});
      return;
    }
    this.#client = client;
    this.#attempt = 0;
  }

  #lost(client: pg.Client, err: unknown): void {
    if (this.#client !== client || this.#closed) return;
    this.#client = undefined;
    client.removeAllListeners('end');
    void client.end().catch(() => {});
    this.#options.logger.warn({ err: errorMessage(err) }, 'cluster channel lost; reconnecting');
    this.#retry();
  }

  #retry(): void {
    if (this.#closed) return;
    const wait = backoffDelay(this.#attempt, RECONNECT_POLICY);
    this.#attempt += 1;
    this.#timer = setTimeout(() => {
      this.#listen().then(
        () => {
          if (this.#closed) return;
          this.#options.logger.info('cluster channel back');
          this.#reconnected.emit();
        },
        () => this.#retry(),
      );
    }, wait);
    this.#timer.unref();
  }
}

/** node-postgres, loaded when a replica first connects: a daemon without a cluster never compiles it. */
async function loadPg(): Promise<typeof pg> {
  return (await import('pg')).default;
}
