import type { AuthInfo, ServerContext } from '@modelcontextprotocol/server';
import type { AgentRef } from '../../gateway/index.js';
import type { SessionState } from './agent-channel.js';

/**
 * Who a `/mcp` request is, as each handler reads it from the request itself. A 2026-07-28 request
 * carries its agent in the SDK's pass-through `authInfo` (routes/mcp.ts sets it as `req.auth`; the
 * SDK hands it to the handlers as `ctx.http.authInfo`), so a `Server` reused between requests
 * (modern-servers.ts) holds nobody's identity. A 2025-era session's agent is the session's own.
 */

/** The SDK's pass-through auth of a request: the agent (its name and view), never its key. */
export function authOf(agent: AgentRef): AuthInfo {
  return { token: '', clientId: agent.name, scopes: [], extra: { agent } };
}

/** The agent `authOf` put in a request's auth; undefined for the operator and without keys. */
export function agentOf(auth: AuthInfo | undefined): AgentRef | undefined {
  const agent = auth?.extra?.agent as AgentRef | undefined;
  return typeof agent?.name === 'string' ? agent : undefined;
}

/** The caller of one request: the session's agent (its view as of now), or the request's own. */
export function callerOf(ctx: Pick<ServerContext, 'http'>, session: Pick<SessionState, 'agent'> | undefined): AgentRef | undefined {
  return session ? session.agent : agentOf(ctx.http?.authInfo);
}
