import type { GetPromptResult, LoggingLevel, ReadResourceResult, Server, ServerContext } from '@modelcontextprotocol/server';
import { mcpAgentTrace } from '../../telemetry/agent-trace.js';
import type { AggregateCapabilities } from '../../upstream/manager.js';
import type { AgentRef } from '../../gateway/index.js';
import type { RequestOptions } from '../../gateway/index.js';
import { runForAgent } from './agent-channel.js';
import { callerOf } from './request-agent.js';
import type { AgentServerOptions } from './agent-server-options.js';
import { toJsonRpcError } from '../errors/jsonrpc-error.js';

/**
 * The handlers of `/mcp` beyond tools (SPEC §7), registered only for what some server has — the
 * SDK refuses a handler for a capability the server does not advertise, and a client asking for
 * one gets `Method not found`, as from any server without it.
 */
const MCP: RequestOptions = { transport: 'mcp' };

export function registerCatalogueHandlers(server: Server, options: AgentServerOptions, available: AggregateCapabilities): void {
  const { lists, gateway, continuations, relayStates, session } = options;
  // The caller is read per request (request-agent.ts): a session's view follows its agent's current settings.
  const whoOf = (ctx: ServerContext): AgentRef | undefined => callerOf(ctx, session);
  const mcpOf = (ctx: ServerContext): RequestOptions => {
    const who = whoOf(ctx);
    return who ? { transport: 'mcp', agent: who } : MCP;
  };
  const agent = { continuations, relayStates, ...(session ? { session } : {}) };
  const traceOf = (ctx: ServerContext): Pick<RequestOptions, 'trace'> => (gateway.tracing ? { trace: mcpAgentTrace(ctx) } : {});

  if (available.prompts) {
    server.setRequestHandler('prompts/list', (_request, ctx) => ({ prompts: lists.prompts(whoOf(ctx)?.view) }));
    server.setRequestHandler('prompts/get', async (request, ctx) => {
      const { name, arguments: args } = request.params;
      try {
        return (await runForAgent(ctx, agent, `prompts/get ${name}`, (caller, signal) =>
          gateway.request({ method: 'prompts/get', name, arguments: args }, { ...mcpOf(ctx), signal, caller, ...traceOf(ctx) }),
        )) as GetPromptResult;
      } catch (err) {
        throw toJsonRpcError(err);
      }
    });
  }

  if (available.resources) {
    server.setRequestHandler('resources/list', (_request, ctx) => ({ resources: lists.resources(whoOf(ctx)?.view).resources }));
    server.setRequestHandler('resources/templates/list', (_request, ctx) => ({ resourceTemplates: lists.resources(whoOf(ctx)?.view).resourceTemplates }));
    server.setRequestHandler('resources/read', async (request, ctx) => {
      const { uri } = request.params;
      try {
        return (await runForAgent(ctx, agent, `resources/read ${uri}`, (caller, signal) =>
          gateway.request({ method: 'resources/read', uri }, { ...mcpOf(ctx), signal, caller, ...traceOf(ctx) }),
        )) as ReadResourceResult;
      } catch (err) {
        throw toJsonRpcError(err, uri);
      }
    });
  }

  // 2025-era sessions subscribe by request; 2026-07-28 clients name their URIs on the listen
  // stream instead (see routes/mcp.ts).
  if (available.subscribe && session) {
    server.setRequestHandler('resources/subscribe', async (request, ctx) => {
      const { uri } = request.params;
      if (session.subscriptions.has(uri)) return {};
      try {
        await gateway.request({ method: 'resources/subscribe', uri }, { ...mcpOf(ctx), signal: ctx.mcpReq.signal });
      } catch (err) {
        throw toJsonRpcError(err, uri);
      }
      session.subscriptions.add(uri);
      return {};
    });
    server.setRequestHandler('resources/unsubscribe', async (request, ctx) => {
      const { uri } = request.params;
      if (!session.subscriptions.delete(uri)) return {};
      await gateway.request({ method: 'resources/unsubscribe', uri }, mcpOf(ctx)).catch(() => undefined);
      return {};
    });
  }

  if (available.completions) {
    server.setRequestHandler('completion/complete', async (request, ctx) => {
      try {
        return (await gateway.request({ method: 'completion/complete', params: request.params as Record<string, unknown> }, { ...mcpOf(ctx), signal: ctx.mcpReq.signal })) as never;
      } catch (err) {
        throw toJsonRpcError(err);
      }
    });
  }

  if (available.logging) {
    // The level filters what this session is shown, and goes to every server that logs, so
    // they stop sending what nobody wants (SPEC §7).
    server.setRequestHandler('logging/setLevel', async (request, ctx) => {
      const level: LoggingLevel = request.params.level;
      if (session) session.logLevel = level;
      await gateway.request({ method: 'logging/setLevel', level }, mcpOf(ctx));
      return {};
    });
  }
}
