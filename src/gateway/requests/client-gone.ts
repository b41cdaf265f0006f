/** What the in-flight stage needs of a REST caller's HTTP response (node's `ServerResponse`). */
export interface ClientResponse {
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
  once(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
}

/**
 * Runs `gone` once when the HTTP client goes away before the response has ended (at once when
 * it already has); returns what stops watching. The in-flight stage uses it to abort the
 * request's own controller, so a REST call needs no AbortController of its own for this (issue #17).
 * `request.raw` emits 'close' as soon as the body is read; the response's 'close' before it has
 * ended is what tells us the client went away.
 */
export function onClientGone(response: ClientResponse, gone: () => void): () => void {
  const onClose = (): void => {
    if (!response.writableEnded) gone();
  };
  response.once('close', onClose);
  if (response.destroyed) gone();
  return () => response.off('close', onClose);
}
