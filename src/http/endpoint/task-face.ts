import { CLIENT_CAPABILITIES_META_KEY, ProtocolError, ProtocolErrorCode, type ClientCapabilities, type ServerContext } from '@modelcontextprotocol/server';
import { ERROR_CATALOGUE } from '../../errors.js';
import { TASKS_EXTENSION } from '../../gateway/index.js';
import type { AgentServerOptions } from './agent-server-options.js';

/**
 * Which wire face of the gateway's tasks a `/mcp` request gets (issue #41): the
 * `io.modelcontextprotocol/tasks` extension (SEP-2663) when the client negotiated it, the
 * 2025-11-25 core task surface when a 2025-era session declared `capabilities.tasks` instead, or
 * none (plain calls). One implementation (gateway/tasks/) behind both.
 */
export type TaskFace = 'extension' | 'legacy';

type Params = { _meta?: Record<string, unknown> | undefined } | undefined;

/** What the client declared: its session's capabilities, or the request's own (2026-07-28, or a per-request opt-in). */
export function capabilitiesOf(ctx: ServerContext, params: Params, options: AgentServerOptions): ClientCapabilities | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const own = (envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? params?._meta?.[CLIENT_CAPABILITIES_META_KEY]) as ClientCapabilities | undefined;
  const session = options.session?.clientCapabilities();
  return own?.extensions?.[TASKS_EXTENSION] !== undefined || !session ? (own ?? session) : session;
}

export function negotiated(capabilities: ClientCapabilities | undefined): boolean {
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/** The face of this request; the extension wins where a 2025-era client declared both. */
export function taskFace(ctx: ServerContext, params: Params, options: AgentServerOptions): TaskFace | undefined {
  if (negotiated(capabilitiesOf(ctx, params, options))) return 'extension';
  return options.session?.clientCapabilities()?.tasks !== undefined ? 'legacy' : undefined;
}

/** -32021 naming the extension (SEP-2575's `requiredCapabilities`), with our code beside it. */
export function missingExtension(): ProtocolError {
  const data = { code: 'TASKS_NOT_NEGOTIATED', requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } };
  return new ProtocolError(ProtocolErrorCode.MissingRequiredClientCapability, ERROR_CATALOGUE.TASKS_NOT_NEGOTIATED.message, data);
}
