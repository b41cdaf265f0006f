import type { Logger } from 'pino';
import { errorMessage } from '../errors.js';
import type { DaemonEvent } from './daemon-events.js';
import { ListenerSet } from '../util/listeners.js';

/** An event as it travels on the bus and on `/events`: the published object with its place in the stream and time. */
export type StampedEvent = DaemonEvent & {
  readonly seq: number;
  readonly ts: string;
  /** In a cluster (issue #28), the replica the event happened on; absent on a lone daemon. */
  readonly replica?: string;
};

export interface EventBusOptions {
  /** Time of each event's `ts`. @default () => new Date() */
  now?: () => Date;
  /** Where a listener that throws is reported. @default nowhere */
  logger?: Pick<Logger, 'error'>;
  /** This replica's id in a cluster: stamped on every event published here. @default none */
  replica?: string;
}

/**
 * The one ordered stream of everything that happens to the daemon: the manager publishes server
 * status and catalogue changes, the runtime its reloads and applied config changes, log
 * forwarding the servers' output. The bus owns `seq` — gap-free from 1, assigned at publish — so
 * every subscriber (the `/events` feed, the `/mcp` relays, tests, embedders) sees the same event
 * with the same number, in the same order.
 *
 * Delivery is synchronous. An event published by a listener while another event is being
 * delivered is queued and delivered after it, so no subscriber ever sees seqs out of order. A
 * listener that throws is logged and does not stop the others, nor the publisher.
 */
export class EventBus {
  readonly #now: () => Date;
  readonly #replica: string | undefined;
  readonly #listeners: ListenerSet<[StampedEvent]>;
  readonly #queue: StampedEvent[] = [];
  #seq = 0;
  #delivering = false;

  constructor(options: EventBusOptions = {}) {
    this.#now = options.now ?? (() => new Date());
    this.#replica = options.replica;
    const logger = options.logger;
    this.#listeners = new ListenerSet((err) => logger?.error({ err: errorMessage(err) }, 'event listener threw'));
  }

  /** The seq of the last event published (0 before the first). */
  get seq(): number {
    return this.#seq;
  }

  get subscriberCount(): number {
    return this.#listeners.size;
  }

  /**
   * Stamps `event` with the next seq and the time (and this replica, unless it names the replica
   * it came from) and delivers it to every subscriber. Bound, so it can be handed around as a
   * plain function (`publish: bus.publish`).
   */
  readonly publish = (event: DaemonEvent & { replica?: string }): StampedEvent => {
    const replica = event.replica ?? this.#replica;
    const stamped = Object.freeze({ seq: ++this.#seq, ts: this.#now().toISOString(), ...event, ...(replica !== undefined ? { replica } : {}) }) as StampedEvent;
    this.#queue.push(stamped);
    if (!this.#delivering) this.#drain();
    return stamped;
  };

  /** Every event published from now on, in seq order. Returns the unsubscribe function. */
  subscribe(listener: (event: StampedEvent) => void): () => void {
    return this.#listeners.add(listener);
  }

  #drain(): void {
    this.#delivering = true;
    try {
      for (let next = this.#queue.shift(); next !== undefined; next = this.#queue.shift()) this.#listeners.emit(next);
    } finally {
      this.#delivering = false;
    }
  }
}
