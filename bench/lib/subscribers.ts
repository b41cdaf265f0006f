import { WebSocket } from 'ws';

/**
 * WebSocket subscribers of `/events` that record which exposed tool names a `tools.changed`
 * event added, so a benchmark can wait until every subscriber has seen one particular change.
 * Only `added` is parsed; the cost of parsing stays in the bench process.
 */
export interface Subscriber {
  ws: WebSocket;
  /** Tool names some `tools.changed` event added. */
  seen: Set<string>;
  waiters: Map<string, () => void>;
}

export async function subscribe(baseUrl: string): Promise<Subscriber> {
  const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/events`);
  const subscriber: Subscriber = { ws, seen: new Set(), waiters: new Map() };
  await new Promise<void>((resolve, reject) => {
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`/events upgrade refused with HTTP ${res.statusCode}`)));
    ws.on('message', (data: Buffer) => {
      const event = JSON.parse(data.toString('utf8')) as { type: string; added?: string[] };
      if (event.type === 'hello') return resolve();
      if (event.type !== 'tools.changed') return;
      for (const name of event.added ?? []) {
        subscriber.seen.add(name);
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
  if (subscriber.seen.has(name)) return Promise.resolve();
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
