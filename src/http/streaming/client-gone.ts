import type { ServerResponse } from 'node:http';
import { CLIENT_GONE } from '../../gateway/index.js';
import { onClientGone } from '../../gateway/index.js';

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
