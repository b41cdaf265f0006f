import type { FastifyPluginCallback } from 'fastify';
import { SwitchboardError } from '../../errors.js';
import type { SwitchboardRuntime } from '../../runtime/runtime.js';

export interface HealthRoutesOptions {
  runtime: SwitchboardRuntime;
}

const HEALTHY = JSON.stringify({ status: 'ok' });
const READY = JSON.stringify({ status: 'ready' });

/**
 * `/health` says the process answers (always 200, never behind auth); `/ready` says the startup
 * gate has resolved, so `/tools` will not block — what an orchestrator's readiness probe wants.
 */
export const healthRoutes: FastifyPluginCallback<HealthRoutesOptions> = (app, { runtime }, done) => {
  app.get('/health', (_request, reply) => {
    void reply.type('application/json; charset=utf-8').send(HEALTHY);
  });

  app.get('/ready', (_request, reply) => {
    switch (runtime.state) {
      case 'ready':
        return void reply.type('application/json; charset=utf-8').send(READY);
      case 'stopping':
      case 'stopped':
        throw new SwitchboardError('SHUTTING_DOWN');
      default:
        throw new SwitchboardError('NOT_READY');
    }
  });

  done();
};
