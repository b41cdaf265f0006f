import type { ServerResponse } from 'node:http';
import { CLIENT_GONE } from './in-flight-calls.js';

/** A request's view of its HTTP client: aborted once the client went away. */
export interface ClientGone {
  readonly signal: AbortSignal;
  /** Stops watching; call it in `finally`. */
  dispose(): void;
}

/**
 * Aborts with `CLIENT_GONE` when the HTTP client goes away before the response has ended, so
 * the upstream request is cancelled (SPEC §7). `request.raw` emits 'close' as soon as the body
 * is read; the response's 'close' before it has ended is what tells us the client went away.
 */
export function watchClientGone(response: ServerResponse): ClientGone {
  const controller = new AbortController();
  const dispose = onClientGone(response, () => controller.abort(CLIENT_GONE));
  return { signal: controller.signal, dispose };
}

/**
 * Runs `gone` once when the HTTP client goes away before the response has ended (at once when
 * it already has); returns what stops watching. The call runner uses it to abort the call's own
 * controller, so a REST call needs no AbortController of its own for this (issue #17).
 */
export function onClientGone(response: ServerResponse, gone: () => void): () => void {
  const onClose = (): void => {
    if (!response.writableEnded) gone();
  };
  response.once('close', onClose);
  if (response.destroyed) gone();
  return () => response.off('close', onClose);
}
