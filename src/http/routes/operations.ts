import type { FastifyPluginCallback } from 'fastify';
import type { SwitchboardRuntime } from '../../runtime/runtime.js';
import { EmptyBodySchema, NameParamsSchema, parseInput, ReloadQuerySchema } from '../schemas.js';

export interface OperationRoutesOptions {
  runtime: SwitchboardRuntime;
}

/**
 * Operator actions. The runtime runs them one at a time (SPEC §8) and throws the catalogue
 * errors (`SERVER_NOT_FOUND`, `SHUTTING_DOWN`), so these handlers only validate and answer with
 * the resulting state of the servers involved.
 */
export const operationRoutes: FastifyPluginCallback<OperationRoutesOptions> = (app, { runtime }, done) => {
  app.post('/reload', async (request) => {
    const { force } = parseInput(ReloadQuerySchema, request.query, 'query');
    parseInput(EmptyBodySchema, request.body, 'body');
    return runtime.reloadAll({ force: force === 'true' });
  });

  app.post('/servers/:name/reload', async (request) => {
    const { name } = parseInput(NameParamsSchema, request.params, 'params');
    parseInput(EmptyBodySchema, request.body, 'body');
    return runtime.reloadServer(name);
  });

  app.post('/servers/:name/disconnect', async (request) => {
    const { name } = parseInput(NameParamsSchema, request.params, 'params');
    parseInput(EmptyBodySchema, request.body, 'body');
    return runtime.disconnectServer(name);
  });

  done();
};
