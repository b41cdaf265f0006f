import type { FetchLike } from '@modelcontextprotocol/client';
import { SwitchboardError } from '../../errors.js';

/**
 * The pause an HTTP upstream asked for, as its transport sees it (server/back-pressure.ts keeps
 * it, one per server: every connection to the server shares it, the era companion's included).
 */
export interface Throttle {
  /** The server answered 429/503 with `Retry-After`: no request before `retryAfterMs` from now. */
  pause(retryAfterMs: number, status: number): void;
  /** How long requests must still hold off; 0 when they may go. */
  remainingMs(): number;
  /** Resolves once no pause is in progress; rejects with `signal`'s reason if it aborts first. */
  over(signal?: AbortSignal): Promise<void>;
}

/** Longest pause honoured: a server asking for more is paused this long, then tried again. */
export const MAX_RETRY_AFTER_MS = 10 * 60_000;

/**
 * `Retry-After` (RFC 9110 §10.2.3) in ms from `now`: delta-seconds or an HTTP date; undefined
 * when absent or unreadable, 0 for a date already past. Capped at `MAX_RETRY_AFTER_MS`.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/**
 * A fetch that keeps an upstream's pause (issue #26 item 2, issue #35 item 3). The SDK transports
 * turn a 429 or 503 into an error without its headers; the pause its `Retry-After` asks for is read
 * here, on the response, and the error still reaches the request that got it. And nothing is sent
 * during a pause, whatever asks: a request is held here until the pause is over (or its signal
 * aborts). This is the last line: the request loop, pings, re-lists, connects and the era
 * companion wait for the pause before they start, so that their deadlines do not run during it;
 * what still gets here in a pause (the event stream's reconnect, a request that raced the 429) waits.
 * A session's DELETE is refused at once instead: it is a courtesy, and held it would hold up a close.
 */
export function watchRetryAfter(base: FetchLike, throttle: Throttle, now: () => number = Date.now): FetchLike {
  return async (url, init) => {
    if (throttle.remainingMs() > 0) {
      if (init?.method === 'DELETE') throw new SwitchboardError('SERVER_BUSY', 'the server asked for a pause (HTTP 429/503 with Retry-After); the session is left to expire');
      await throttle.over(init?.signal ?? undefined);
    }
    const response = await base(url, init);
    if (response.status === 429 || response.status === 503) {
      const ms = parseRetryAfter(response.headers.get('retry-after'), now());
      if (ms !== undefined) throttle.pause(ms, response.status);
    }
    return response;
  };
}
