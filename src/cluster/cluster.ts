import type { Logger } from 'pino';
import { errorMessage } from '../errors.js';
import type { DaemonEvent, DaemonEventType } from '../events/daemon-events.js';
import type { StampedEvent } from '../events/event-bus.js';
import { MAX_PAYLOAD_BYTES, type ClusterChannel, type ClusterMessage } from './cluster-channel.js';
import type { ReplicaHeartbeats, ReplicaInfo } from './replica-heartbeats.js';

/**
 * One replica's part in a cluster (issue #28 item 2). Replicas share the store, so what an
 * operator changes is already in the database; what each replica keeps in memory is told to
 * change over the channel:
 * - **operator events** (reloads, config changes, approvals asked and decided) go to every replica
 *   and appear on each one's `/events`, carrying the replica they happened on;
 * - **operator actions** that change what a replica serves are applied on every replica: a reload,
 *   an agent or key created, rotated or revoked (re-read from the store), held tools approved
 *   (pinned in the store, served by each replica from its own catalogue), an OAuth sign-in (the
 *   tokens are in the store; a replica whose server waits for one connects with them).
 * Each replica's own server events (status, tools, logs) stay its own: every replica connects
 * its own upstreams (item 4).
 */

/** The events every replica shows, whichever replica they happened on. */
export const CLUSTER_EVENT_TYPES: readonly DaemonEventType[] = ['reload.started', 'reload.finished', 'config.changed', 'approval.requested', 'approval.resolved'];

/** An operator action another replica took, to be applied here too. */
export type ClusterAction =
  | { kind: 'agents.changed' }
  | { kind: 'tools.approved'; server: string; tools?: string[]; hashes?: Record<string, string> }
  | { kind: 'reload'; server: string | null; force?: boolean }
  | { kind: 'signed-in'; server: string };

/** What this replica does when another one acted. */
export interface ClusterEffects {
  /** Re-reads agents and keys from the store. */
  refreshAgents(): Promise<void>;
  /** Serves (and pins) the held tools the other replica approved. */
  approveTools(server: string, tools: string[] | undefined, hashes: Record<string, string> | undefined): void;
  reload(server: string | null, force: boolean): Promise<unknown>;
  /** A sign-in done on another replica is in the store: a server waiting for one connects with it. */
  resumeAfterSignIn(server: string): void;
}

export interface ClusterOptions {
  replicaId: string;
  channel: ClusterChannel;
  heartbeats: ReplicaHeartbeats;
  /** This replica's bus: its operator events go out, the others' come in. */
  bus: { subscribe(listener: (event: StampedEvent) => void): () => void; publish(event: DaemonEvent & { replica?: string }): unknown };
  effects: ClusterEffects;
  logger: Pick<Logger, 'info' | 'warn' | 'debug'>;
}

export class Cluster {
  readonly replicaId: string;
  readonly #options: ClusterOptions;
  readonly #stops: Array<() => void> = [];

  constructor(options: ClusterOptions) {
    this.replicaId = options.replicaId;
    this.#options = options;
  }

  /** Listens, beats, and relays. Rejects when the channel cannot connect at all. */
  async start(): Promise<void> {
    const { channel, heartbeats, bus, logger } = this.#options;
    this.#stops.push(channel.onMessage((message) => this.#receive(message)));
    // Whatever was said while the channel was away is lost: re-read what the store holds.
    this.#stops.push(channel.onReconnect(() => void this.#options.effects.refreshAgents()));
    await channel.start();
    this.#stops.push(
      bus.subscribe((event) => {
        if (!CLUSTER_EVENT_TYPES.includes(event.type) || event.replica !== this.replicaId) return;
        const { seq: _seq, ts: _ts, replica: _replica, ...plain } = event;
        void channel.send({ kind: 'event', event: fitForNotify(plain) });
      }),
    );
    await heartbeats.start();
    logger.info({ replica: this.replicaId }, 'joined the cluster');
  }

  /** Tells the other replicas to apply what was just done here. */
  announce(action: ClusterAction): void {
    void this.#options.channel.send({ ...action, kind: `action:${action.kind}` });
  }

  replicas(): Promise<ReplicaInfo[]> {
    return this.#options.heartbeats.list();
  }

  /** The live replica `id` names, to forward a request it owns to. */
  findReplica(id: string): Promise<ReplicaInfo | undefined> {
    return this.#options.heartbeats.find(id);
  }

  async close(): Promise<void> {
    for (const stop of this.#stops.splice(0)) stop();
    await this.#options.heartbeats.stop();
    await this.#options.channel.close();
  }

  #receive(message: ClusterMessage): void {
    const { effects, bus, logger } = this.#options;
    if (message.kind === 'event') {
      const event = message.event as DaemonEvent | undefined;
      if (event && CLUSTER_EVENT_TYPES.includes(event.type)) bus.publish({ ...event, replica: message.from });
      return;
    }
    const failed = (err: unknown): void => logger.warn({ from: message.from, kind: message.kind, err: errorMessage(err) }, 'could not apply another replica\'s change');
    try {
      switch (message.kind) {
        case 'action:agents.changed':
          effects.refreshAgents().catch(failed);
          return;
        case 'action:tools.approved':
          effects.approveTools(String(message.server), message.tools as string[] | undefined, message.hashes as Record<string, string> | undefined);
          return;
        case 'action:signed-in':
          effects.resumeAfterSignIn(String(message.server));
          return;
        case 'action:reload':
          effects.reload(typeof message.server === 'string' ? message.server : null, message.force === true).catch(failed);
          return;
        default:
          logger.debug({ kind: message.kind }, 'unknown cluster message');
      }
    } catch (err) {
      failed(err);
    }
  }
}

/** Room left for the envelope of a message under NOTIFY's payload limit. */
const EVENT_BUDGET_BYTES = MAX_PAYLOAD_BYTES - 400;

/**
 * An approval's arguments (up to 16 KiB) can be more than NOTIFY carries: the other replicas
 * then show the request without them (`argumentsOmitted`); `GET /approvals` on the replica that
 * holds the call has them whole.
 */
function fitForNotify(event: DaemonEvent): DaemonEvent {
  if (event.type !== 'approval.requested' || Buffer.byteLength(JSON.stringify(event)) <= EVENT_BUDGET_BYTES) return event;
  return { ...event, arguments: {}, argumentsOmitted: true } as DaemonEvent;
}
