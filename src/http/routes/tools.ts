import { performance } from 'node:perf_hooks';
import type { FastifyPluginCallback } from 'fastify';
import { isSwitchboardError, SwitchboardError } from '../../errors.js';
import type { MCPManager } from '../../mcp/manager.js';
import type { SwitchboardRuntime } from '../../runtime.js';
import type { CallMetrics, CallOutcome } from '../call-metrics.js';
import { CLIENT_GONE, type InFlightCalls } from '../in-flight-calls.js';
import {
  CallToolBodySchema,
  NameParamsSchema,
  parseInput,
  ToolGetQuerySchema,
  ToolListQuerySchema,
  type CallToolBody,
} from '../schemas.js';
import { ifNoneMatchHits, ToolListCache } from '../tool-list-cache.js';

export interface ToolRoutesOptions {
  manager: MCPManager;
  runtime: SwitchboardRuntime;
  /** In-flight REST calls; aborted together on shutdown. */
  calls: InFlightCalls;
  metrics: CallMetrics;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const NO_ARGUMENTS: CallToolBody = {};

/**
 * The tool catalogue over REST. `GET /tools` and `POST /tools/:name/call` are the hot paths:
 * the list body is cached per catalogue version, and a call validates with a schema built once
 * and allocates little beyond its AbortController.
 */
export const toolRoutes: FastifyPluginCallback<ToolRoutesOptions> = (app, options, done) => {
  const { manager, runtime, calls, metrics } = options;
  const cache = new ToolListCache();

  /** Before the startup gate the list would be partial; wait for it unless told not to. */
  const settle = async (wait: string | undefined): Promise<void> => {
    if (wait === 'false' || runtime.state === 'ready') return;
    // A failed start still leaves a (possibly empty) catalogue worth serving; /status says why.
    await runtime.whenReady().catch(() => undefined);
  };

  app.get('/tools', async (request, reply) => {
    const query = parseInput(ToolListQuerySchema, request.query, 'query');
    await settle(query.wait);
    const catalogue = manager.getCatalogue();
    const etag = cache.etagFor(catalogue.version, query);
    void reply.header('etag', etag).header('cache-control', 'no-cache');
    if (ifNoneMatchHits(request.headers['if-none-match'], etag)) return reply.code(304).send();
    const unfiltered = query.server === undefined && query.q === undefined;
    return reply.type(JSON_TYPE).send(unfiltered ? cache.fullBody(catalogue) : cache.filteredBody(catalogue, query));
  });

  app.get('/tools/:name', async (request) => {
    const { name } = parseInput(NameParamsSchema, request.params, 'params');
    const { wait } = parseInput(ToolGetQuerySchema, request.query, 'query');
    await settle(wait);
    const tool = manager.getCatalogue().get(name);
    if (!tool) throw new SwitchboardError('TOOL_NOT_FOUND', `No tool named "${name}"`);
    return tool;
  });

  app.post('/tools/:name/call', async (request, reply) => {
    const { name } = parseInput(NameParamsSchema, request.params, 'params');
    const body = request.body === undefined ? NO_ARGUMENTS : parseInput(CallToolBodySchema, request.body, 'body');
    const started = performance.now();
    const controller = calls.begin();
    const response = reply.raw;
    // `request.raw` emits 'close' as soon as the body is read; the response's 'close' before it
    // has ended is what tells us the client went away.
    const onClose = (): void => {
      if (!response.writableEnded) controller.abort(CLIENT_GONE);
    };
    response.once('close', onClose);
    let outcome: CallOutcome = 'error';
    try {
      if (response.destroyed) controller.abort(CLIENT_GONE);
      const result = await manager.callTool(name, body.arguments, {
        signal: controller.signal,
        timeoutMs: body.timeoutMs,
      });
      outcome = result.isError === true ? 'tool_error' : 'ok';
      return result;
    } catch (err) {
      const reason: unknown = controller.signal.aborted ? controller.signal.reason : undefined;
      if (reason === CLIENT_GONE) {
        outcome = 'cancelled';
        // Nobody is left to read an answer; tell fastify not to try.
        return reply.hijack();
      }
      if (isSwitchboardError(reason, 'SHUTTING_DOWN')) {
        outcome = 'shutdown';
        throw reason;
      }
      if (isSwitchboardError(err, 'TOOL_NOT_FOUND')) outcome = 'not_found';
      throw err;
    } finally {
      response.off('close', onClose);
      calls.end(controller);
      metrics.record(outcome, (performance.now() - started) / 1000);
    }
  });

  done();
};
