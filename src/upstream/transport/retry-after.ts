import type { FetchLike } from '@modelcontextprotocol/client';

/** An HTTP upstream asked for a pause: no request before `retryAfterMs` from now. */
export type OnThrottled = (retryAfterMs: number, status: number) => void;

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
 * A fetch that reports an upstream's 429 or 503 with a `Retry-After` (issue #26 item 2). The SDK
 * transports turn such an answer into an error without its headers; the pause it asks for is
 * read here, on the response, and the error still reaches the request that got it.
 */
export function watchRetryAfter(base: FetchLike, onThrottled: OnThrottled, now: () => number = Date.now): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (response.status === 429 || response.status === 503) {
      const ms = parseRetryAfter(response.headers.get('retry-after'), now());
      if (ms !== undefined) onThrottled(ms, response.status);
    }
    return response;
  };
}
