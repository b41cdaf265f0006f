import type { FastifyPluginCallback, FastifyReply } from 'fastify';
import type { MCPManager } from '../../upstream/manager.js';
import { CLIENT_GONE } from '../../gateway/index.js';
import type { Gateway } from '../../gateway/index.js';
import { toForwardedError } from '../errors/forwarded-error.js';
import { CatalogueListQuerySchema, GetPromptBodySchema, NameParamsSchema, parseInput, ResourceReadQuerySchema, type GetPromptBody } from '../schemas.js';
import { restTrace } from '../../telemetry/agent-trace.js';

export interface CatalogueRoutesOptions {
  manager: MCPManager;
  /** The one request path (deadline, cancel, in-flight, metrics). */
  gateway: Gateway;
}

const NO_ARGUMENTS: GetPromptBody = {};

/**
 * REST mirrors of the prompts and resources `/mcp` serves (SPEC §7, §9): the aggregated lists,
 * with the server of each item, and `prompts/get` / `resources/read` answered exactly as the
 * server answered. Like a tool call, a request is cancelled upstream when its client goes away.
 */
export const catalogueRoutes: FastifyPluginCallback<CatalogueRoutesOptions> = (app, { manager, gateway }, done) => {
  app.get('/prompts', async (request) => {
    const query = parseInput(CatalogueListQuerySchema, request.query, 'query');
    await gateway.settleStartup(query.wait);
    const catalogue = manager.getPrompts();
    const view = request.agent?.view;
    const prompts = catalogue.list();
    if (query.server === undefined && !view) return { version: catalogue.version, prompts };
    return { version: catalogue.version, prompts: prompts.filter((p) => (query.server === undefined || p.server === query.server) && (!view || view.allowsServer(p.server))) };
  });

  app.post('/prompts/:name/get', async (request, reply) => {
    const { name } = parseInput(NameParamsSchema, request.params, 'params');
    const body = request.body === undefined ? NO_ARGUMENTS : parseInput(GetPromptBodySchema, request.body, 'body');
    const timeout = body.timeoutMs !== undefined ? { timeoutMs: body.timeoutMs } : {};
    const agent = request.agent ? { agent: request.agent } : {};
    return forward(reply, () =>
      gateway.request(
        { method: 'prompts/get', name, arguments: body.arguments },
        { transport: 'rest', client: reply.raw, ...timeout, ...agent, ...restTrace(gateway, request.headers) },
      ),
    );
  });

  app.get('/resources', async (request) => {
    const query = parseInput(CatalogueListQuerySchema, request.query, 'query');
    await gateway.settleStartup(query.wait);
    const catalogue = manager.getResources();
    const { resources, templates } = catalogue.listOwned();
    const view = request.agent?.view;
    // Resources and templates follow their server into (or out of) an agent's view.
    const wanted = ({ server }: { server: string }): boolean => (query.server === undefined || server === query.server) && (!view || view.allowsServer(server));
    return {
      version: catalogue.version,
      resources: resources.filter(wanted).map(({ server, item }) => ({ ...item, server })),
      resourceTemplates: templates.filter(wanted).map(({ server, item }) => ({ ...item, server })),
    };
  });

  app.get('/resources/read', async (request, reply) => {
    const { uri } = parseInput(ResourceReadQuerySchema, request.query, 'query');
    const agent = request.agent ? { agent: request.agent } : {};
    return forward(reply, () => gateway.request({ method: 'resources/read', uri }, { transport: 'rest', client: reply.raw, ...agent, ...restTrace(gateway, request.headers) }));
  });

  done();
};

/** Runs a forwarded request (the gateway cancels it when the client goes away); the server's result as is. */
async function forward(reply: FastifyReply, run: () => Promise<Record<string, unknown>>): Promise<unknown> {
  try {
    return await run();
  } catch (err) {
    // Nobody is left to read an answer; tell fastify not to try.
    if (err === CLIENT_GONE) return reply.hijack();
    throw toForwardedError(err);
  }
}
