import { onTestFinished } from 'vitest';
import type { DaemonEvent, DaemonEventType } from '../../src/events/daemon-events.js';
import type { EventBus, StampedEvent } from '../../src/events/event-bus.js';
import type { Cleanup } from './process.js';

/** The event as its publisher made it, without the bus's `seq` and `ts`. */
export function unstamped(event: StampedEvent): DaemonEvent {
  const { seq: _seq, ts: _ts, ...published } = event;
  return published as DaemonEvent;
}

export interface DaemonEventReader {
  /** Every event recorded so far, in order. */
  readonly all: DaemonEvent[];
  /**
   * The next event (after those already taken) of `type` matching `predicate`, waiting for it
   * up to `timeoutMs`; events before it are skipped. A test never misses an event that came
   * before it started waiting.
   */
  next<T extends DaemonEventType>(type: T, predicate?: (event: Extract<DaemonEvent, { type: T }>) => boolean, timeoutMs?: number): Promise<Extract<DaemonEvent, { type: T }>>;
}

/**
 * Buffers every event on `bus` from now on (until the test ends, or `cleanup` runs) for in-order
 * waits. A concurrent test passes its context's `onTestFinished`.
 */
export function readDaemonEvents(bus: Pick<EventBus, 'subscribe'>, cleanup: Cleanup = onTestFinished): DaemonEventReader {
  const all: DaemonEvent[] = [];
  let cursor = 0;
  const waiters = new Set<() => void>();
  cleanup(
    bus.subscribe((event) => {
      all.push(unstamped(event));
      for (const wake of [...waiters]) wake();
    }),
  );
  return {
    all,
    next(type, predicate = () => true, timeoutMs = 15_000) {
      type Wanted = Extract<DaemonEvent, { type: typeof type }>;
      const take = (): Wanted | undefined => {
        while (cursor < all.length) {
          const event = all[cursor++] as DaemonEvent;
          if (event.type === type && predicate(event as Wanted)) return event as Wanted;
        }
        return undefined;
      };
      const found = take();
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`no ${type} event within ${timeoutMs} ms; seen: ${JSON.stringify(all.slice(-10))}`));
        }, timeoutMs);
        const wake = (): void => {
          const event = take();
          if (!event) return;
          clearTimeout(timer);
          waiters.delete(wake);
          resolve(event);
        };
        waiters.add(wake);
      });
    },
  };
}
