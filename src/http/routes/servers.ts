import type { FastifyPluginCallback } from 'fastify';
import { SwitchboardError } from '../../errors.js';
import type { MCPManager } from '../../upstream/manager.js';
import { NameParamsSchema, parseInput } from '../schemas.js';

export interface ServerRoutesOptions {
  manager: MCPManager;
}

/**
 * Read-only views of the servers. Snapshots carry status, source file, counts and errors —
 * never the config itself, whose env and headers hold credentials.
 */
export const serverRoutes: FastifyPluginCallback<ServerRoutesOptions> = (app, { manager }, done) => {
  app.get('/servers', () => ({ servers: manager.listServers() }));

  app.get('/servers/:name', (request) => {
    const { name } = parseInput(NameParamsSchema, request.params, 'params');
    const detail = manager.getServer(name);
    if (!detail) throw new SwitchboardError('SERVER_NOT_FOUND', `No server named "${name}"`);
    return detail;
  });

  done();
};
