import type { Histogram, TextMapPropagator, Tracer } from '@opentelemetry/api';

/**
 * What the request path needs of OpenTelemetry (issue #26): a tracer, the W3C propagator and the
 * two MCP duration histograms. Only `@opentelemetry/api` types: the SDK behind them is loaded by
 * otel-loader.ts, and only when telemetry is configured. Absent (the default), the runner skips
 * tracing with one check per request.
 */
export interface Telemetry {
  tracer: Tracer;
  /** Reads and writes `traceparent` / `tracestate` (W3C Trace Context). */
  propagator: TextMapPropagator;
  /** `mcp.server.operation.duration`, seconds: each agent request, as this daemon served it. */
  serverDuration: Histogram;
  /** `mcp.client.operation.duration`, seconds: each attempt at an upstream request. */
  clientDuration: Histogram;
}

/** The W3C trace context an agent sent: `params._meta` on `/mcp`, HTTP headers on REST. */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

/** What the agent's side of a request tells its span, besides the request itself. */
export interface AgentTrace {
  carrier?: TraceCarrier;
  /** `mcp.session.id`: the agent's `/mcp` session, when it has one. */
  sessionId?: string;
  /** `jsonrpc.request.id`: the agent's JSON-RPC id on `/mcp`. */
  requestId?: string | number;
  /** `mcp.protocol.version` the agent speaks, when known. */
  protocolVersion?: string;
}

/** The upstream side of one attempt, as its span describes it. */
export interface AttemptTarget {
  /** The server's name in Switchboard. */
  server: string;
  /** `stdio`, `http` or `sse`. */
  transport: string;
  protocolVersion: string | undefined;
  /** The server's URL (http and sse), for `server.address` / `server.port`. */
  url?: string | undefined;
}

/**
 * Traces the attempts of one agent request at its upstream (upstream-request.ts): each attempt
 * (a retry after a reconnect is a second one) runs under its own CLIENT span, child of the
 * request's SERVER span, and `send` gets the `_meta` entries (`traceparent`, `tracestate`) that
 * carry that span to the server.
 */
export interface UpstreamTrace {
  attempt<T>(target: AttemptTarget, method: string, params: Record<string, unknown>, send: (meta: Record<string, string>) => Promise<T>): Promise<T>;
}

/** The carrier in a `_meta` object or a header bag, when it holds a `traceparent`. */
export function carrierOf(source: Readonly<Record<string, unknown>> | undefined): TraceCarrier | undefined {
  const traceparent = source?.traceparent;
  if (typeof traceparent !== 'string') return undefined;
  const tracestate = source?.tracestate;
  return typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent };
}
