import type { FastifyPluginCallback } from 'fastify';
import { SwitchboardError } from '../../errors.js';
import type { MCPManager } from '../../upstream/manager.js';
import type { SwitchboardRuntime } from '../../runtime/runtime.js';
import type { Gateway } from '../../gateway/index.js';
import { CLIENT_GONE } from '../../gateway/index.js';
import { wantsEventStream } from '../streaming/event-stream.js';
import { NameParamsSchema, parseInput, parseNameParams, ToolGetQuerySchema, ToolListQuerySchema, ToolSearchQuerySchema, type CallToolBody } from '../schemas.js';
import { toolNotFound, withToolSuggestions } from '../../gateway/index.js';
import { parseCallBody } from '../call-body.js';
import { streamCall } from '../streaming/stream-call.js';
import { restTrace } from '../../telemetry/agent-trace.js';
import { ifNoneMatchHits } from '../../gateway/index.js';

export interface ToolRoutesOptions {
  manager: MCPManager;
  runtime: SwitchboardRuntime;
  /** The one call path (deadline, cancel, progress, metrics). */
  gateway: Gateway;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const NO_ARGUMENTS: CallToolBody = {};

/**
 * The tool catalogue over REST. `GET /tools` and `POST /tools/:name/call` are the hot paths:
 * the list body is cached per catalogue version, and a call validates with a schema built once
 * and allocates little beyond its AbortController.
 */
export const toolRoutes: FastifyPluginCallback<ToolRoutesOptions> = (app, options, done) => {
  const { manager, runtime, gateway } = options;
  const cache = gateway.toolLists;

  app.get('/tools', async (request, reply) => {
    const query = parseInput(ToolListQuerySchema, request.query, 'query');
    await gateway.settleStartup(query.wait);
    const catalogue = manager.getCatalogue();
    // An agent sees its view (issue #22): its own body and ETag, never another view's.
    const view = request.agent?.view;
    const etag = cache.etagFor(catalogue.version, query, view);
    void reply.header('etag', etag).header('cache-control', 'no-cache');
    if (ifNoneMatchHits(request.headers['if-none-match'], etag)) return reply.code(304).send();
    const unfiltered = query.server === undefined && query.q === undefined;
    const body = !unfiltered ? cache.filteredBody(catalogue, query, view) : view ? cache.viewBody(catalogue, view) : cache.fullBody(catalogue);
    // Definitions handed to an agent count against its token budget (issue #38).
    await gateway.countDefinitions(request.agent, body);
    return reply.type(JSON_TYPE).send(body);
  });

  // Before `/tools/:name`, so "search" is never taken for a tool's name (fastify prefers the static route anyway).
  app.get('/tools/search', async (request) => {
    const query = parseInput(ToolSearchQuerySchema, request.query, 'query');
    await gateway.settleStartup(query.wait);
    // An agent searches its view only (issue #22): a tool outside it is never a hit, and a
    // server outside it is as unknown as one that does not exist.
    const view = request.agent?.view;
    if (query.server !== undefined && (!manager.hasServer(query.server) || (view && !view.allowsServer(query.server)))) {
      throw new SwitchboardError('SERVER_NOT_FOUND', `No server named "${query.server}"`);
    }
    // The ranking and neighbourhood map of `search_tools` (issue #37), each match as a row.
    const answer = await gateway.modes.answer(query.q, query.limit, query.server, request.agent, ({ tool, score }) => ({
      name: tool.name,
      server: tool.server,
      ...(tool.title !== undefined ? { title: tool.title } : {}),
      description: tool.description,
      score,
    }));
    await gateway.countDefinitions(request.agent, answer);
    return answer;
  });

  app.get('/tools/:name', async (request) => {
    const { name } = parseInput(NameParamsSchema, request.params, 'params');
    const { wait } = parseInput(ToolGetQuerySchema, request.query, 'query');
    await gateway.settleStartup(wait);
    const view = request.agent?.view;
    const found = manager.getCatalogue().get(name);
    // Outside the agent's view, a tool is as unknown as one that does not exist.
    const tool = found && (!view || view.allowsTool(found)) ? found : undefined;
    if (!tool) {
      gateway.refuseHeld(name, view);
      throw toolNotFound(name, manager.getCatalogue(), view);
    }
    await gateway.countDefinitions(request.agent, tool);
    return tool;
  });

  app.post('/tools/:name/call', async (request, reply) => {
    const { name } = parseNameParams(request.params);
    const body = request.body === undefined ? NO_ARGUMENTS : parseCallBody(request.body);
    // Asked for a stream: progress as it comes, then the result (see stream-call.ts).
    if (wantsEventStream(request.headers.accept)) return streamCall(request, reply, { manager, runtime, gateway }, name, body);
    try {
      return await gateway.call(name, body.arguments, {
        transport: 'rest',
        client: reply.raw,
        ...(request.agent ? { agent: request.agent } : {}),
        ...(body.timeoutMs !== undefined ? { timeoutMs: body.timeoutMs } : {}),
        ...restTrace(gateway, request.headers),
      });
    } catch (err) {
      // Nobody is left to read an answer; tell fastify not to try.
      if (err === CLIENT_GONE) return reply.hijack();
      throw withToolSuggestions(err, name, manager.getCatalogue(), request.agent?.view);
    }
  });

  done();
};
