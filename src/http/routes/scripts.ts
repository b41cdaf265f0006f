import type { FastifyPluginCallback } from 'fastify';
import { CLIENT_GONE, ScriptInput, type Gateway } from '../../gateway/index.js';
import { restTrace } from '../../telemetry/agent-trace.js';
import { parseInput } from '../schemas.js';

export interface ScriptRoutesOptions {
  gateway: Gateway;
}

/**
 * Code mode over REST (issue #39). `POST /scripts/run {code, timeoutMs?}` runs a script through
 * the gateway as `run_script` does: `{runId, calls, value, logs}`, or `{runId, calls, error:
 * {code, message, line?}, logs}` when the script failed (200 either way: the run happened); a
 * client going away cancels the script and its calls. `GET /scripts` (operator) lists the runs.
 */
export const scriptRoutes: FastifyPluginCallback<ScriptRoutesOptions> = (app, { gateway }, done) => {
  app.post('/scripts/run', async (request, reply) => {
    const { code, timeoutMs } = parseInput(ScriptInput, request.body ?? {}, 'body');
    try {
      return await gateway.runScript(code, timeoutMs, {
        transport: 'rest',
        client: reply.raw,
        ...(request.agent ? { agent: request.agent } : {}),
        ...restTrace(gateway, request.headers),
      });
    } catch (err) {
      if (err === CLIENT_GONE) return reply.hijack();
      throw err;
    }
  });
  app.get('/scripts', () => ({ scripts: gateway.scripts.list() }));
  done();
};
