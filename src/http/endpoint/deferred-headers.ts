import type { ServerResponse } from 'node:http';

/**
 * Keeps a 2025-era POST's SSE headers until its first event (issue #43, the soak's hung call).
 * The SDK's Node transport flushes `200 text/event-stream` as soon as the stream opens, before
 * any event; a replica that dies then (SIGKILL, OOM, a crash) leaves the client with an open
 * stream that ends without an answer, and the SDK client — which resumes only streams that sent
 * an event id — waits for its request timeout (60 s) instead of failing. Held back, the headers
 * go out with the first event (Node sends them with the first write), so a replica that dies
 * before it has anything to say resets a connection that never answered: `fetch failed` at the
 * client, `502` from a balancer, and the SDK client fails the call at once. This is what a
 * request forwarded to another replica (cluster/forward-request.ts) and a 2026-07-28 response
 * (the SDK's `toNodeHandler`) already do. The stream's keep-alive comment (every 15 s) is a
 * first write too: a call silent that long has sent its headers.
 */
export function deferHeaders(response: ServerResponse): void {
  // An own no-op in front of the prototype's: the headers leave with the first write.
  Object.defineProperty(response, 'flushHeaders', { value: () => undefined, configurable: true });
}
