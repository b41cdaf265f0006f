import type { FastifyPluginCallback, FastifyReply } from 'fastify';
import type { MCPManager } from '../../mcp/manager.js';
import type { SwitchboardRuntime } from '../../runtime/runtime.js';
import { watchClientGone } from '../calls/client-gone.js';
import { toForwardedError } from '../errors/forwarded-error.js';
import { CatalogueListQuerySchema, GetPromptBodySchema, NameParamsSchema, parseInput, ResourceReadQuerySchema, type GetPromptBody } from '../schemas.js';
import { settleStartup } from '../startup-wait.js';

export interface CatalogueRoutesOptions {
  manager: MCPManager;
  runtime: Pick<SwitchboardRuntime, 'state' | 'whenReady'>;
}

const NO_ARGUMENTS: GetPromptBody = {};

/**
 * REST mirrors of the prompts and resources `/mcp` serves (SPEC §7, §9): the aggregated lists,
 * with the server of each item, and `prompts/get` / `resources/read` answered exactly as the
 * server answered. Like a tool call, a request is cancelled upstream when its client goes away.
 */
export const catalogueRoutes: FastifyPluginCallback<CatalogueRoutesOptions> = (app, { manager, runtime }, done) => {
  app.get('/prompts', async (request) => {
    const query = parseInput(CatalogueListQuerySchema, request.query, 'query');
    await settleStartup(runtime, query.wait);
    const catalogue = manager.getPrompts();
    const prompts = catalogue.list();
    return { version: catalogue.version, prompts: query.server === undefined ? prompts : prompts.filter((p) => p.server === query.server) };
  });

  app.post('/prompts/:name/get', async (request, reply) => {
    const { name } = parseInput(NameParamsSchema, request.params, 'params');
    const body = request.body === undefined ? NO_ARGUMENTS : parseInput(GetPromptBodySchema, request.body, 'body');
    return forward(reply, (signal) =>
      manager.forwarding.getPrompt(name, body.arguments, { signal, ...(body.timeoutMs !== undefined ? { timeoutMs: body.timeoutMs } : {}) }),
    );
  });

  app.get('/resources', async (request) => {
    const query = parseInput(CatalogueListQuerySchema, request.query, 'query');
    await settleStartup(runtime, query.wait);
    const catalogue = manager.getResources();
    const { resources, templates } = catalogue.listOwned();
    const wanted = ({ server }: { server: string }): boolean => query.server === undefined || server === query.server;
    return {
      version: catalogue.version,
      resources: resources.filter(wanted).map(({ server, item }) => ({ ...item, server })),
      resourceTemplates: templates.filter(wanted).map(({ server, item }) => ({ ...item, server })),
    };
  });

  app.get('/resources/read', async (request, reply) => {
    const { uri } = parseInput(ResourceReadQuerySchema, request.query, 'query');
    return forward(reply, (signal) => manager.forwarding.readResource(uri, { signal }));
  });

  done();
};

/** Runs a forwarded request, cancelled when the client goes away; the server's result as is. */
async function forward(reply: FastifyReply, run: (signal: AbortSignal) => Promise<Record<string, unknown>>): Promise<unknown> {
  const gone = watchClientGone(reply.raw);
  try {
    return await run(gone.signal);
  } catch (err) {
    // Nobody is left to read an answer; tell fastify not to try.
    if (gone.signal.aborted) return reply.hijack();
    throw toForwardedError(err);
  } finally {
    gone.dispose();
  }
}
