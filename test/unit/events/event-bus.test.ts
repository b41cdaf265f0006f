import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { PublishEvent } from '../../../src/events/daemon-events.js';
import { EventBus, type StampedEvent } from '../../../src/events/event-bus.js';

/** Log lines the bus writes, parsed. */
function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

describe('EventBus', () => {
  it('numbers events gap-free from 1 across every publisher, and every subscriber sees the same events', () => {
    const now = new Date('2030-01-02T03:04:05.678Z');
    const bus = new EventBus({ now: () => now });
    const a: StampedEvent[] = [];
    const b: StampedEvent[] = [];
    bus.subscribe((event) => a.push(event));
    bus.subscribe((event) => b.push(event));
    // Publishers get the bound function only, as the manager, the runtime and log forwarding do.
    const manager: PublishEvent = bus.publish;
    const runtime: PublishEvent = bus.publish;
    const logs: PublishEvent = bus.publish;

    expect(bus.seq).toBe(0);
    runtime({ type: 'reload.started', server: null });
    manager({ type: 'server.status', server: 'echo', status: 'connecting', previous: 'disconnected', toolCount: 0 });
    logs({ type: 'server.log', server: 'echo', stream: 'stderr', lines: ['hi'] });
    runtime({ type: 'reload.finished', server: null, ok: true });

    expect(bus.seq).toBe(4);
    expect(a.map((e) => [e.seq, e.type])).toEqual([
      [1, 'reload.started'],
      [2, 'server.status'],
      [3, 'server.log'],
      [4, 'reload.finished'],
    ]);
    expect(a[0]).toEqual({ seq: 1, ts: now.toISOString(), type: 'reload.started', server: null });
    // The very same (frozen) objects: no subscriber can renumber or alter what another sees.
    expect(b).toEqual(a);
    for (const [i, event] of b.entries()) expect(event).toBe(a[i]);
    expect(Object.isFrozen(a[0])).toBe(true);
  });

  it('returns the stamped event to the publisher', () => {
    const bus = new EventBus();
    bus.publish({ type: 'reload.started', server: null });
    const stamped = bus.publish({ type: 'reload.started', server: 'x' });
    expect(stamped).toMatchObject({ seq: 2, type: 'reload.started', server: 'x', ts: expect.any(String) });
  });

  it('delivers an event published by a listener after the one being delivered, to everyone in seq order', () => {
    const bus = new EventBus();
    const first: number[] = [];
    const second: number[] = [];
    bus.subscribe((event) => {
      first.push(event.seq);
      if (event.type === 'reload.started') bus.publish({ type: 'reload.finished', server: null, ok: true });
    });
    bus.subscribe((event) => second.push(event.seq));

    bus.publish({ type: 'reload.started', server: null });

    expect(first).toEqual([1, 2]);
    expect(second).toEqual([1, 2]);
  });

  it('a listener that throws is logged; the others and the publisher carry on', () => {
    const { logger, lines } = capturedLogger();
    const bus = new EventBus({ logger });
    const seen: number[] = [];
    bus.subscribe(() => {
      throw new Error('listener bug');
    });
    bus.subscribe((event) => seen.push(event.seq));

    expect(() => bus.publish({ type: 'reload.started', server: null })).not.toThrow();
    bus.publish({ type: 'reload.started', server: null });

    expect(seen).toEqual([1, 2]);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ msg: 'event listener threw', err: 'listener bug' });
  });

  it('unsubscribe stops delivery to that listener only; seq goes on regardless', () => {
    const bus = new EventBus();
    const kept: number[] = [];
    const dropped: number[] = [];
    bus.subscribe((event) => kept.push(event.seq));
    const unsubscribe = bus.subscribe((event) => dropped.push(event.seq));
    expect(bus.subscriberCount).toBe(2);

    bus.publish({ type: 'reload.started', server: null });
    unsubscribe();
    unsubscribe();
    bus.publish({ type: 'reload.started', server: null });

    expect(dropped).toEqual([1]);
    expect(kept).toEqual([1, 2]);
    expect(bus.subscriberCount).toBe(1);
  });

  it('subscribing the same function twice gives two subscriptions', () => {
    const bus = new EventBus();
    const seen: number[] = [];
    const listener = (event: StampedEvent): void => void seen.push(event.seq);
    const off = bus.subscribe(listener);
    bus.subscribe(listener);
    bus.publish({ type: 'reload.started', server: null });
    off();
    bus.publish({ type: 'reload.started', server: null });
    expect(seen).toEqual([1, 1, 2]);
  });
});
