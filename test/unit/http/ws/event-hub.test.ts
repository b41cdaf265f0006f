import { describe, expect, it, vi } from 'vitest';
import { CLOSE_GOING_AWAY, CLOSE_TOO_SLOW, EventHub, type EventHubOptions, type EventSink, type SnapshotSource, type WireEvent } from '../../../../src/http/ws/event-hub.js';
import type { DaemonEvent } from '../../../../src/events/daemon-events.js';
import type { ServerSnapshot } from '../../../../src/upstream/server-snapshot.js';
import { EventBus } from '../../../../src/events/event-bus.js';
import { compileAgentView } from '../../../../src/gateway/agents/agent-view.js';

/** A real bus to publish on, plus a manager stand-in for the read-only views the hello uses. */
function fakeManager(servers: ServerSnapshot[] = [], now?: () => Date) {
  const bus = new EventBus(now ? { now } : {});
  const tools = [
    { name: 'a', server: 'one' },
    { name: 'b', server: 'two' },
  ];
  const catalogue = {
    version: 7,
    list: () => tools,
    get: (name: string) => tools.find((tool) => tool.name === name),
    itemsOf: (server: string) => tools.filter((tool) => tool.server === server),
  };
  const source: SnapshotSource = {
    listServers: () => servers,
    getCatalogue: () => catalogue,
  };
  return {
    source,
    bus,
    emit(event: DaemonEvent = { type: 'reload.started', server: null }) {
      bus.publish(event);
    },
  };
}

class ArraySink implements EventSink {
  readonly raw: string[] = [];
  closed: { code: number; reason: string } | undefined;
  bufferedAmount = 0;

  send(data: string): void {
    this.raw.push(data);
  }

  close(code: number, reason: string): void {
    this.closed = { code, reason };
  }

  get messages(): WireEvent[] {
    return this.raw.map((data) => JSON.parse(data) as WireEvent);
  }

  get seqs(): number[] {
    return this.messages.filter((m) => m.type !== 'hello').map((m) => m.seq);
  }
}

/** `now` is the bus's clock (events) and the hub's (hello) alike. */
function createHub(options: Partial<Omit<EventHubOptions, 'bus' | 'manager'>> = {}) {
  const manager = fakeManager([], options.now);
  const hub = new EventHub({ bus: manager.bus, manager: manager.source, runtime: { state: 'ready' }, ...options });
  return { hub, manager };
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('EventHub', () => {
  it('stamps every event with a gap-free seq from 1 and an ISO time, keeping its fields', () => {
    const now = new Date('2030-01-02T03:04:05.678Z');
    const { hub, manager } = createHub({ now: () => now });
    const sink = new ArraySink();
    hub.subscribe(sink);
    manager.emit({ type: 'reload.started', server: null });
    manager.emit({ type: 'reload.finished', server: 'echo', ok: false, error: { code: 'INTERNAL_ERROR', message: 'boom' } });
    manager.emit({
      type: 'tools.changed',
      server: 'echo',
      added: ['mcp_echo_echo'],
      removed: [],
      toolCount: 1,
      cause: 'background',
      deferred: false,
    });

    expect(hub.seq).toBe(3);
    const [hello, ...events] = sink.messages;
    expect(hello).toMatchObject({ type: 'hello', seq: 0 });
    expect(events).toEqual([
      { seq: 1, ts: now.toISOString(), type: 'reload.started', server: null },
      { seq: 2, ts: now.toISOString(), type: 'reload.finished', server: 'echo', ok: false, error: { code: 'INTERNAL_ERROR', message: 'boom' } },
      {
        seq: 3,
        ts: now.toISOString(),
        type: 'tools.changed',
        server: 'echo',
        added: ['mcp_echo_echo'],
        removed: [],
        toolCount: 1,
        cause: 'background',
        deferred: false,
      },
    ]);
  });

  it('hello is a snapshot as of the last seq', () => {
    const server = { name: 'echo', status: 'connected', toolCount: 2 } as ServerSnapshot;
    const manager = fakeManager([server]);
    const hub = new EventHub({ bus: manager.bus, manager: manager.source, runtime: { state: 'starting' } });
    manager.emit();
    manager.emit();
    const sink = new ArraySink();
    hub.subscribe(sink);
    expect(sink.messages).toEqual([
      {
        seq: 2,
        ts: expect.any(String),
        type: 'hello',
        state: 'starting',
        servers: [server],
        catalogueVersion: 7,
        toolCount: 2,
      },
    ]);
  });

  it('a hub made after events were published starts at the bus seq and never replays from before it', () => {
    const manager = fakeManager();
    for (let i = 0; i < 4; i++) manager.emit();
    const hub = new EventHub({ bus: manager.bus, manager: manager.source, runtime: { state: 'ready' } });
    expect(hub.seq).toBe(4);
    expect(hub.since(4)).toEqual([]);
    expect(hub.since(2)).toBeUndefined();
    const sink = new ArraySink();
    hub.subscribe(sink);
    manager.emit();
    expect(sink.messages[0]).toMatchObject({ type: 'hello', seq: 4 });
    expect(sink.seqs).toEqual([5]);
    expect(hub.since(4)?.map((e) => e.seq)).toEqual([5]);
  });

  it('keeps only the last ringSize events', () => {
    const { hub, manager } = createHub({ ringSize: 5 });
    for (let i = 0; i < 12; i++) manager.emit();

    expect(hub.since(7)?.map((e) => e.seq)).toEqual(range(8, 12));
    expect(hub.since(6)).toBeUndefined();
    expect(hub.since(0)).toBeUndefined();
  });

  it('since() answers inside the ring, and undefined outside it or ahead of it', () => {
    const { hub, manager } = createHub({ ringSize: 100 });
    expect(hub.since(0)).toEqual([]);
    for (let i = 0; i < 10; i++) manager.emit();

    expect(hub.since(0)?.map((e) => e.seq)).toEqual(range(1, 10));
    expect(hub.since(4)?.map((e) => e.seq)).toEqual(range(5, 10));
    expect(hub.since(10)).toEqual([]);
    expect(hub.since(11)).toBeUndefined();
    expect(hub.since(-1)).toBeUndefined();
    expect(hub.since(2.5)).toBeUndefined();
  });

  it('subscribe with since replays exactly the missed events, then goes live without a gap', () => {
    const { hub, manager } = createHub({ ringSize: 50 });
    for (let i = 0; i < 20; i++) manager.emit();
    const sink = new ArraySink();
    hub.subscribe(sink, { since: 15 });
    manager.emit();
    manager.emit();

    expect(sink.messages.some((m) => m.type === 'hello')).toBe(false);
    expect(sink.seqs).toEqual(range(16, 22));
  });

  it('subscribe with a since that is too old or ahead sends a fresh hello, then live', () => {
    const { hub, manager } = createHub({ ringSize: 3 });
    for (let i = 0; i < 10; i++) manager.emit();
    for (const since of [2, 99]) {
      const sink = new ArraySink();
      hub.subscribe(sink, { since });
      manager.emit();
      const [hello, live] = sink.messages;
      expect(hello).toMatchObject({ type: 'hello', seq: hub.seq - 1 });
      expect(live).toMatchObject({ type: 'reload.started', seq: hub.seq });
    }
  });

  it('a hello asked for with recent carries the latest kept events, oldest first, scoped for an agent', () => {
    const { hub, manager } = createHub({ ringSize: 5 });
    for (let i = 0; i < 6; i++) manager.emit();
    manager.emit({ type: 'server.status', server: 'two', status: 'connected', previous: 'connecting', toolCount: 1 });
    manager.emit({ type: 'server.status', server: 'one', status: 'connected', previous: 'connecting', toolCount: 1 });
    const recentOf = (options: Parameters<EventHub['subscribe']>[1]): number[] | undefined => {
      const sink = new ArraySink();
      hub.subscribe(sink, options);
      const hello = sink.messages[0] as WireEvent & { recent?: Array<{ seq: number }> };
      expect(hello.type).toBe('hello');
      return hello.recent?.map((event) => event.seq);
    };
    expect(recentOf({ recent: 3 })).toEqual([6, 7, 8]);
    // Only what the ring still keeps, and the same with a since too old to replay.
    expect(recentOf({ recent: 100 })).toEqual(range(4, 8));
    expect(recentOf({ recent: 2, since: 1 })).toEqual([7, 8]);
    expect(recentOf({})).toBeUndefined();
    // An agent limited to server one does not see server two's status among them.
    const onlyOne = { name: 'one-only', view: compileAgentView({ servers: ['one'] }) };
    expect(recentOf({ recent: 3, agent: onlyOne })).toEqual([6, 8]);
  });

  it('serialises each event once, whatever the number of subscribers', () => {
    const { hub, manager } = createHub();
    const sinks = Array.from({ length: 200 }, () => new ArraySink());
    for (const sink of sinks) hub.subscribe(sink);
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      manager.emit();
      expect(stringify).toHaveBeenCalledTimes(1);
      // Replays reuse the stored string too.
      hub.subscribe(new ArraySink(), { since: 0 });
      expect(stringify).toHaveBeenCalledTimes(1);
    } finally {
      stringify.mockRestore();
    }
    const expected = sinks[0]!.raw.at(-1);
    for (const sink of sinks) expect(sink.raw.at(-1)).toBe(expected);
  });

  it('drops a subscriber whose queue passes the bound with 4008; the others keep receiving', () => {
    const { hub, manager } = createHub({ maxBufferedBytes: 1000 });
    const fast = new ArraySink();
    const slow = new ArraySink();
    hub.subscribe(fast);
    hub.subscribe(slow);
    manager.emit();
    slow.bufferedAmount = 1001;
    manager.emit();
    manager.emit();

    expect(slow.closed).toEqual({ code: CLOSE_TOO_SLOW, reason: 'subscriber too slow' });
    expect(slow.seqs).toEqual([1, 2]);
    expect(fast.seqs).toEqual([1, 2, 3]);
    expect(fast.closed).toBeUndefined();
    expect(hub.subscriberCount).toBe(1);
  });

  it('stops a replay at the subscriber that became too slow during it', () => {
    const { hub, manager } = createHub({ maxBufferedBytes: 100 });
    for (let i = 0; i < 10; i++) manager.emit();
    const sink = new ArraySink();
    sink.send = function (data) {
      this.raw.push(data);
      this.bufferedAmount += data.length;
    };
    hub.subscribe(sink, { since: 0 });

    expect(sink.closed?.code).toBe(CLOSE_TOO_SLOW);
    expect(sink.raw.length).toBeLessThan(10);
    expect(hub.subscriberCount).toBe(0);
  });

  it('drops a subscriber whose send throws without disturbing the others', () => {
    const { hub, manager } = createHub();
    const broken = new ArraySink();
    hub.subscribe(broken);
    broken.send = () => {
      throw new Error('socket gone');
    };
    const ok = new ArraySink();
    hub.subscribe(ok);
    manager.emit();

    expect(broken.closed?.code).toBe(CLOSE_GOING_AWAY);
    expect(ok.seqs).toEqual([1]);
    expect(hub.subscriberCount).toBe(1);
  });

  it('unsubscribe stops delivery', () => {
    const { hub, manager } = createHub();
    const sink = new ArraySink();
    const unsubscribe = hub.subscribe(sink);
    manager.emit();
    unsubscribe();
    manager.emit();
    expect(sink.seqs).toEqual([1]);
    expect(hub.subscriberCount).toBe(0);
  });

  it('close() closes every subscriber with 1001 and refuses new ones; stop() unsubscribes', () => {
    const { hub, manager } = createHub();
    const sinks = [new ArraySink(), new ArraySink()];
    for (const sink of sinks) hub.subscribe(sink);
    hub.close();
    for (const sink of sinks) expect(sink.closed).toEqual({ code: CLOSE_GOING_AWAY, reason: 'going away' });
    expect(hub.subscriberCount).toBe(0);

    const late = new ArraySink();
    hub.subscribe(late);
    expect(late.closed?.code).toBe(CLOSE_GOING_AWAY);
    expect(late.raw).toEqual([]);

    expect(manager.bus.subscriberCount).toBe(1);
    hub.stop();
    hub.stop();
    expect(manager.bus.subscriberCount).toBe(0);
  });

  it('rejects a ring size or bound that is not a positive integer', () => {
    expect(() => createHub({ ringSize: 0 })).toThrow(RangeError);
    expect(() => createHub({ maxBufferedBytes: -1 })).toThrow(RangeError);
  });
});
