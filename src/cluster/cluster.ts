import type { Logger } from 'pino';
import { errorMessage } from '../errors.js';
import type { DaemonEvent } from '../events/daemon-events.js';
import type { StampedEvent } from '../events/event-bus.js';
import { MAX_PAYLOAD_BYTES, type ClusterChannel, type ClusterMessage } from './cluster-channel.js';
import type { ReplicaHeartbeats, ReplicaInfo } from './replica-heartbeats.js';
import { AppliedEventSchema, applyEvent, isApplied, plainEvent, RELAYED_EVENT_TYPES, type ClusterEffects } from './relayed-events.js';

/**
 * One replica's part in a cluster (issue #28 item 2). Replicas share the store, so what an
 * operator changes is already in the database; what each replica keeps in memory is told to
 * change over the channel, by relaying the bus events the owners publish (relayed-events.ts):
 * - the **operator events** (reloads, config changes, approvals asked and decided, agents
 *   changed, held tools approved, OAuth sign-ins) go to every replica and appear on each one's
 *   `/events`, carrying the replica they happened on;
 * - of those, the ones that change what a replica serves are **applied** on every replica: a
 *   reload, an agent or key created, rotated or revoked (re-read from the store), held tools
 *   approved (pinned and served where the replica holds the same definitions), an OAuth sign-in
 *   (the tokens are in the store; a replica whose server waits for one connects with them). What
 *   a replica does to follow another's says so (`follows`), and is not applied again.
 * Each replica's own server events (status, tools, logs) stay its own: every replica connects
 * its own upstreams (item 4).
 */

export type { ClusterEffects } from './relayed-events.js';

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
        // Only what happened here: an event relayed in carries the replica it came from.
        if (!RELAYED_EVENT_TYPES.has(event.type) || event.replica !== this.replicaId) return;
        void channel.send({ kind: 'event', event: fitForNotify(plainEvent(event)) });
      }),
    );
    await heartbeats.start();
    logger.info({ replica: this.replicaId }, 'joined the cluster');
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
    const event = message.event as DaemonEvent | undefined;
    if (message.kind !== 'event' || typeof event?.type !== 'string' || !RELAYED_EVENT_TYPES.has(event.type)) {
      logger.debug({ kind: message.kind }, 'unknown cluster message');
      return;
    }
    const failed = (err: unknown): void => logger.warn({ from: message.from, type: event.type, err: errorMessage(err) }, "could not apply another replica's change");
    const applied = isApplied(event.type) ? AppliedEventSchema.safeParse(event) : undefined;
    if (applied && !applied.success) return failed(new Error(`malformed ${event.type} event`));
    bus.publish({ ...event, replica: message.from });
    if (!applied) return;
    // A replica following another's action: shown above; the replica it follows told everyone itself.
    if ('follows' in applied.data && applied.data.follows !== undefined) return;
    applyEvent(effects, applied.data, message.from).catch(failed);
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
