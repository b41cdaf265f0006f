import { WebSocket } from 'ws';
import type { WireEvent } from '../../src/http/ws/event-hub.js';

/**
 * Reading the `/events` feed in tests without sleeping: every message is buffered from the moment
 * the socket opens, and the waits below consume that buffer in order, so a message that arrived
 * before the test started waiting is never missed. Every wait is bounded.
 */

export const DEFAULT_WAIT_MS = 10_000;

interface Reader {
  received: WireEvent[];
  cursor: number;
  closed?: { code: number; reason: string };
  waiters: Set<() => void>;
}

const readers = new WeakMap<WebSocket, Reader>();

export interface OpenEventsOptions {
  /** Query string without `?`, e.g. `since=12`. */
  query?: string;
  token?: string;
  /** Called before any message is read (e.g. to pause the socket). */
  onOpen?: (ws: WebSocket) => void;
}

/** Connects to `<baseUrl>/events` and starts buffering; resolves once the socket is open. */
export async function openEvents(baseUrl: string, options: OpenEventsOptions = {}): Promise<WebSocket> {
  const url = new URL('/events', baseUrl.replace(/^http/, 'ws'));
  if (options.query) url.search = options.query;
  if (options.token) url.searchParams.set('token', options.token);
  const ws = new WebSocket(url);
  const reader: Reader = { received: [], cursor: 0, waiters: new Set() };
  readers.set(ws, reader);
  ws.on('message', (data) => {
    reader.received.push(JSON.parse(String(data)) as WireEvent);
    wake(reader);
  });
  ws.on('close', (code, reason) => {
    reader.closed = { code, reason: String(reason) };
    wake(reader);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => {
      options.onOpen?.(ws);
      resolve();
    });
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused with HTTP ${res.statusCode}`)));
  });
  return ws;
}

function wake(reader: Reader): void {
  for (const waiter of reader.waiters) waiter();
  reader.waiters.clear();
}

/** Resolves on the next message or close, or after `ms`. */
function nextChange(reader: Reader, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const waiter = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      reader.waiters.delete(waiter);
      resolve();
    }, ms);
    reader.waiters.add(waiter);
  });
}

function readerOf(ws: WebSocket): Reader {
  const reader = readers.get(ws);
  if (!reader) throw new Error('socket was not opened with openEvents()');
  return reader;
}

/** Everything received so far, including what was already consumed. */
export function received(ws: WebSocket): readonly WireEvent[] {
  return readerOf(ws).received;
}

/**
 * Waits until `predicate` holds for a buffered message after the cursor; returns every message
 * from the cursor up to and including it, and moves the cursor past it.
 */
export async function collectUntil(ws: WebSocket, predicate: (event: WireEvent) => boolean, timeoutMs = DEFAULT_WAIT_MS): Promise<WireEvent[]> {
  const reader = readerOf(ws);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const index = reader.received.findIndex((event, i) => i >= reader.cursor && predicate(event));
    if (index !== -1) {
      const batch = reader.received.slice(reader.cursor, index + 1);
      reader.cursor = index + 1;
      return batch;
    }
    if (reader.closed) {
      throw new Error(`socket closed (${reader.closed.code} ${reader.closed.reason}) before the awaited event`);
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      const seen = reader.received.slice(reader.cursor).map((e) => `${e.seq}:${e.type}`);
      throw new Error(`no matching event within ${timeoutMs} ms; unconsumed: [${seen.join(', ')}]`);
    }
    await nextChange(reader, left);
  }
}

/** The next message of `type` (skipping others), bounded by `timeoutMs`. */
export async function nextEvent<T extends WireEvent['type']>(ws: WebSocket, type: T, timeoutMs = DEFAULT_WAIT_MS): Promise<Extract<WireEvent, { type: T }>> {
  const batch = await collectUntil(ws, (event) => event.type === type, timeoutMs);
  return batch.at(-1) as Extract<WireEvent, { type: T }>;
}

/** Resolves with the close code and reason, bounded by `timeoutMs`. */
export async function closed(ws: WebSocket, timeoutMs = DEFAULT_WAIT_MS): Promise<{ code: number; reason: string }> {
  const reader = readerOf(ws);
  const deadline = Date.now() + timeoutMs;
  while (!reader.closed) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`socket still open after ${timeoutMs} ms`);
    await nextChange(reader, left);
  }
  return reader.closed;
}
