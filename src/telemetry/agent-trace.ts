import type { IncomingHttpHeaders } from 'node:http';
import type { ServerContext } from '@modelcontextprotocol/server';
import { carrierOf, type AgentTrace } from './telemetry.js';

/** The 2026-07-28 envelope key naming the revision a request speaks. */
const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';

/**
 * What an `/mcp` request tells its span: the agent's trace context from `params._meta` (where the
 * MCP conventions carry it), its session and JSON-RPC id, and its protocol revision when the
 * request names one. Asked for only when tracing is on.
 */
export function mcpAgentTrace(ctx: ServerContext): AgentTrace {
  const carrier = carrierOf(ctx.mcpReq._meta);
  const version = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION_KEY];
  return {
    ...(carrier ? { carrier } : {}),
    ...(ctx.sessionId ? { sessionId: ctx.sessionId } : {}),
    requestId: ctx.mcpReq.id,
    ...(typeof version === 'string' ? { protocolVersion: version } : {}),
  };
}

/**
 * The run options a REST request adds for its span: the W3C `traceparent` / `tracestate` headers
 * it came with. Nothing when tracing is off (the headers are not even looked at) or none came.
 */
export function restTrace(runner: { readonly tracing: boolean }, headers: IncomingHttpHeaders): { trace?: AgentTrace } {
  if (!runner.tracing) return {};
  const carrier = carrierOf(headers);
  return carrier ? { trace: { carrier } } : {};
}
