import type { FetchLike } from '@modelcontextprotocol/client';
import { carrierOf, type TraceCarrier } from './telemetry.js';

/**
 * The trace context of an outgoing JSON-RPC request body, from its `params._meta` (where the
 * attempt's span put it, see request-span.ts); undefined for any other body. The body is only
 * parsed when it mentions `traceparent` at all, so untraced requests cost a substring search.
 */
export function traceCarrierOfBody(body: unknown): TraceCarrier | undefined {
  if (typeof body !== 'string' || !body.includes('"traceparent"')) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return undefined;
  }
  const meta = (message as { params?: { _meta?: unknown } } | null)?.params?._meta;
  return typeof meta === 'object' && meta !== null ? carrierOf(meta as Record<string, unknown>) : undefined;
}

/**
 * A fetch that also sends a request's trace context as the `traceparent` / `tracestate` HTTP
 * headers (issue #26), so that an HTTP upstream's own HTTP instrumentation continues the same
 * trace as its MCP handler, which reads `_meta`. Both come from the same body, so they agree.
 */
export function traceHeadersFetch(base: FetchLike): FetchLike {
  return (url, init) => {
    const carrier = traceCarrierOfBody(init?.body);
    if (!carrier?.traceparent) return base(url, init);
    const headers = new Headers(init?.headers);
    headers.set('traceparent', carrier.traceparent);
    if (carrier.tracestate) headers.set('tracestate', carrier.tracestate);
    return base(url, { ...init, headers });
  };
}
