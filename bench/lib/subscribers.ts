import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';

/**
 * WebSocket subscribers of `/events` that record, for each exposed tool name a `tools.changed`
 * event added, how late that event arrived (receipt minus the event's own `ts`, wall clock, ms
 * resolution), so a benchmark can wait until every subscriber has seen one particular change
 * (B5, B8). Only `type`, `ts` and `added` are read; parsing is the bench process's cost.
 */
export interface Subscriber {
  ws: WebSocket;
  /** tool name → delivery latency (ms) of the tools.changed event that added it. */
  deliveries: Map<string, number>;
  waiters: Map<string, () => void>;
}

export async function subscribe(baseUrl: string): Promise<Subscriber> {
  const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/events`);
  const subscriber: Subscriber = { ws, deliveries: new Map(), waiters: new Map() };
  await new Promise<void>((resolve, reject) => {
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`/events upgrade refused with HTTP ${res.statusCode}`)));
    ws.on('message', (data: Buffer) => {
      // Taken before parsing: parsing is the bench's cost, not the daemon's.
      const receivedAt = performance.timeOrigin + performance.now();
      const event = JSON.parse(data.toString('utf8')) as { type: string; ts: string; added?: string[] };
      if (event.type === 'hello') return resolve();
      if (event.type !== 'tools.changed') return;
      const latency = receivedAt - Date.parse(event.ts);
      for (const name of event.added ?? []) {
        subscriber.deliveries.set(name, latency);
        subscriber.waiters.get(name)?.();
      }
    });
  });
  return subscriber;
}

/** `count` subscribers, connected 50 at a time (each gets its `hello` before the next batch). */
export async function subscribeMany(baseUrl: string, count: number): Promise<Subscriber[]> {
  const out: Subscriber[] = [];
  while (out.length < count) {
    const batch = Math.min(50, count - out.length);
    out.push(...(await Promise.all(Array.from({ length: batch }, () => subscribe(baseUrl)))));
  }
  return out;
}

/** Resolves once `subscriber` has seen a `tools.changed` that added `name`. */
export function sawAdded(subscriber: Subscriber, name: string): Promise<void> {
  if (subscriber.deliveries.has(name)) return Promise.resolve();
  return new Promise((resolve) =>
    subscriber.waiters.set(name, () => {
      subscriber.waiters.delete(name);
      resolve();
    }),
  );
}

/** Rejects with `message` unless `promise` settles within `timeoutMs` (the timer is always cleared). */
export async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${message} within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
