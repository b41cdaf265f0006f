import type { ServerSnapshot } from '../../upstream/server-snapshot.js';
import type { EventBus, StampedEvent } from '../../events/event-bus.js';
import type { RuntimeState, SwitchboardRuntime } from '../../runtime/runtime.js';
import type { AgentRef } from '../../gateway/index.js';
import { scopeEvent, scopeHello, type ScopeTools } from '../../gateway/index.js';

export type { StampedEvent } from '../../events/event-bus.js';

/**
 * The snapshot a subscriber gets first (and again when its `since` is too old). `seq` is the last
 * event it reflects, so the next event the subscriber receives is `seq + 1`.
 */
export interface HelloEvent {
  seq: number;
  ts: string;
  type: 'hello';
  state: RuntimeState;
  servers: ServerSnapshot[];
  catalogueVersion: number;
  toolCount: number;
  /** Asked for with `recent` (`?recent=`): the latest kept events up to `seq`, oldest first, so a feed opens with history. */
  recent?: StampedEvent[];
}

export type WireEvent = StampedEvent | HelloEvent;

/**
 * One subscriber, whatever carries it (a WebSocket in production, an array in tests). The hub
 * hands every subscriber the same already-serialised string.
 */
export interface EventSink {
  send(data: string): void;
  /** Bytes queued for this subscriber and not yet handed to the kernel. */
  readonly bufferedAmount: number;
  close(code: number, reason: string): void;
}

/** Close code for a subscriber whose queue passed `maxBufferedBytes` (private-use range 4000–4999). */
export const CLOSE_TOO_SLOW = 4008;
/** Close code when the daemon shuts down (RFC 6455 "going away"). */
export const CLOSE_GOING_AWAY = 1001;
/** Close code for an agent whose key was revoked, rotated or has expired (4401: "unauthorized", private-use range). */
export const CLOSE_KEY_ENDED = 4401;

/** What the hello snapshot reads (`MCPManager` fits). */
export interface SnapshotSource {
  listServers(): ServerSnapshot[];
  getCatalogue(): { readonly version: number; list(): readonly unknown[] } & ScopeTools;
}

export interface EventHubOptions {
  /** The stream the hub relays; its seq is the feed's seq. */
  bus: Pick<EventBus, 'seq' | 'subscribe'>;
  manager: SnapshotSource;
  runtime: Pick<SwitchboardRuntime, 'state'>;
  /** How many recent events are kept for `since` replays. @default 1000 */
  ringSize?: number;
  /**
   * A subscriber whose unsent bytes pass this bound after a send is closed with
   * `CLOSE_TOO_SLOW`; the others are not affected. @default 1048576 (1 MiB)
   */
  maxBufferedBytes?: number;
  /** Whether an agent subscriber may still hear events (its key not expired); checked per event. @default always */
  agentValid?: (agent: AgentRef) => boolean;
  /** Time of the hello snapshot (events carry the bus's). @default () => new Date() */
  now?: () => Date;
}

export interface SubscribeOptions {
  /** Replay the events after this seq, or send a fresh hello when they are no longer kept. */
  since?: number;
  /** The agent the subscriber is: it gets only what its scope allows (gateway/agents/event-scope.ts). @default everything */
  agent?: AgentRef;
  /** With a hello (no `since`, or one no longer kept): up to this many of the latest kept events in it. @default 0 */
  recent?: number;
}

/**
 * One kept event. Serialised once, when first needed (a subscriber or a replay), and reused for
 * every one after: with nobody listening — the common case for `call.finished` under load — an
 * event costs no `JSON.stringify` at all.
 */
class RingEntry {
  #data: string | undefined;

  constructor(
    readonly seq: number,
    readonly event: StampedEvent,
  ) {}

  get data(): string {
    return (this.#data ??= JSON.stringify(this.event));
  }
}

const DEFAULT_RING_SIZE = 1000;
const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;

/**
 * The `/events` side of the event bus: keeps the last `ringSize` events (serialised once) for
 * `since` replays and fans them out to subscribers, dropping the slow ones. Everything here is
 * synchronous: the bus delivers synchronously and `subscribe` sends the hello or replay and joins
 * the live set in the same tick, so no event can fall between replay and live, and none can be
 * sent twice.
 */
export class EventHub {
  private readonly manager: SnapshotSource;
  private readonly runtime: Pick<SwitchboardRuntime, 'state'>;
  private readonly ringSize: number;
  private readonly maxBufferedBytes: number;
  private readonly now: () => Date;
  /** Circular buffer; `ring[seq % ringSize]` holds event `seq` while it is kept. */
  private readonly ring: Array<RingEntry | undefined>;
  /** Each subscriber, with the agent it is (undefined: the operator, or no keys). */
  private readonly sinks = new Map<EventSink, AgentRef | undefined>();
  /** The last event received (the bus's seq when the hub was made, before the first). */
  private lastSeq: number;
  /** The first seq this hub saw: events before it were never in its ring. */
  private readonly firstSeq: number;
  private closed = false;
  private unsubscribe: (() => void) | undefined;
  private readonly agentValid: ((agent: AgentRef) => boolean) | undefined;

  constructor(options: EventHubOptions) {
    this.manager = options.manager;
    this.runtime = options.runtime;
    this.ringSize = positiveInteger(options.ringSize ?? DEFAULT_RING_SIZE, 'ringSize');
    this.maxBufferedBytes = positiveInteger(options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES, 'maxBufferedBytes');
    this.now = options.now ?? (() => new Date());
    this.agentValid = options.agentValid;
    this.ring = new Array<RingEntry | undefined>(this.ringSize);
    this.lastSeq = options.bus.seq;
    this.firstSeq = this.lastSeq + 1;
    this.unsubscribe = options.bus.subscribe((event) => this.receive(event));
  }

  /** The seq of the last event (0 before the first). */
  get seq(): number {
    return this.lastSeq;
  }

  get subscriberCount(): number {
    return this.sinks.size;
  }

  /** A snapshot of the daemon as of event `seq`. */
  hello(): HelloEvent {
    const catalogue = this.manager.getCatalogue();
    return {
      seq: this.lastSeq,
      ts: this.now().toISOString(),
      type: 'hello',
      state: this.runtime.state,
      servers: this.manager.listServers(),
      catalogueVersion: catalogue.version,
      toolCount: catalogue.list().length,
    };
  }

  /**
   * The events after `seq`, oldest first; `undefined` when some of them are no longer kept or
   * `seq` is ahead of the stream (for example a seq from before a daemon restart).
   */
  since(seq: number): StampedEvent[] | undefined {
    return this.entriesSince(seq)?.map((entry) => entry.event);
  }

  /**
   * Sends the hello (or, with `since`, the missed events) and then every new event. Returns the
   * unsubscribe function; it does not close the sink.
   */
  subscribe(sink: EventSink, options: SubscribeOptions = {}): () => void {
    if (this.closed) {
      sink.close(CLOSE_GOING_AWAY, 'going away');
      return () => undefined;
    }
    const { agent } = options;
    const replay = options.since === undefined ? undefined : this.entriesSince(options.since);
    this.sinks.set(sink, agent);
    if (!replay) {
      const hello = this.hello();
      const recent = options.recent ? { recent: this.recentEvents(options.recent, agent) } : {};
      this.deliver(sink, JSON.stringify(agent ? { ...hello, ...scopeHello(hello, agent, this.manager.getCatalogue()), ...recent } : { ...hello, ...recent }));
    } else {
      // A replay is filtered exactly as the live events are.
      for (const entry of replay) {
        if (!this.sinks.has(sink)) break;
        this.send(sink, entry, agent);
      }
    }
    return () => {
      this.sinks.delete(sink);
    };
  }

  /** Closes every subscriber with 1001 and refuses new ones; events are still kept until `stop()`. */
  close(): void {
    this.closed = true;
    const sinks = [...this.sinks.keys()];
    this.sinks.clear();
    for (const sink of sinks) closeQuietly(sink, CLOSE_GOING_AWAY, 'going away');
  }

  /** Closes the subscribers of agent `name` (its keys were revoked or rotated): they must come back with a valid key. */
  closeAgent(name: string): void {
    for (const [sink, agent] of [...this.sinks]) if (agent?.name === name) this.drop(sink, CLOSE_KEY_ENDED, 'key revoked');
  }

  /** Stops listening to the bus. Idempotent. */
  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private receive(event: StampedEvent): void {
    const seq = event.seq;
    this.lastSeq = seq;
    const entry = new RingEntry(seq, event);
    this.ring[seq % this.ringSize] = entry;
    // Keys ended (here or, relayed, on another replica): the feeds they hold open must come back with a valid one.
    if (event.type === 'agent.changed' && event.change !== 'added') this.closeAgent(event.agent);
    for (const [sink, agent] of this.sinks) this.send(sink, entry, agent);
  }

  /** Sends `entry` as `agent` may see it: the shared string, or a narrowed copy, or nothing. */
  private send(sink: EventSink, entry: RingEntry, agent: AgentRef | undefined): void {
    if (!agent) return this.deliver(sink, entry.data);
    if (this.agentValid && !this.agentValid(agent)) return this.drop(sink, CLOSE_KEY_ENDED, 'key expired');
    const scoped = scopeEvent(entry.event, agent, this.manager.getCatalogue());
    if (scoped !== undefined) this.deliver(sink, scoped === entry.event ? entry.data : JSON.stringify(scoped));
  }

  /** The last `count` kept events, oldest first, each as `agent` may see it (some not at all). */
  private recentEvents(count: number, agent: AgentRef | undefined): StampedEvent[] {
    const oldestKept = Math.max(this.firstSeq, this.lastSeq - this.ringSize + 1);
    const entries = this.entriesSince(Math.max(oldestKept, this.lastSeq - count + 1) - 1) ?? [];
    if (!agent) return entries.map((entry) => entry.event);
    const tools = this.manager.getCatalogue();
    return entries.flatMap((entry) => scopeEvent(entry.event, agent, tools) ?? []);
  }

  private entriesSince(seq: number): RingEntry[] | undefined {
    if (!Number.isSafeInteger(seq) || seq < 0 || seq > this.lastSeq) return undefined;
    const oldestKept = Math.max(this.firstSeq, this.lastSeq - this.ringSize + 1);
    if (seq + 1 < oldestKept) return undefined;
    const entries: RingEntry[] = [];
    for (let next = seq + 1; next <= this.lastSeq; next++) {
      const entry = this.ring[next % this.ringSize];
      // Cannot happen while the arithmetic above holds; refuse rather than send a gap.
      if (entry?.seq !== next) return undefined;
      entries.push(entry);
    }
    return entries;
  }

  private deliver(sink: EventSink, data: string): void {
    try {
      sink.send(data);
    } catch {
      this.drop(sink, CLOSE_GOING_AWAY, 'send failed');
      return;
    }
    if (sink.bufferedAmount > this.maxBufferedBytes) this.drop(sink, CLOSE_TOO_SLOW, 'subscriber too slow');
  }

  private drop(sink: EventSink, code: number, reason: string): void {
    if (!this.sinks.delete(sink)) return;
    closeQuietly(sink, code, reason);
  }
}

function closeQuietly(sink: EventSink, code: number, reason: string): void {
  try {
    sink.close(code, reason);
  } catch {
    // The subscriber is gone either way; one broken socket must not stop the fan-out.
  }
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}
