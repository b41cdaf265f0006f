import type { FastifyPluginCallback } from 'fastify';
import { z } from 'zod';
import type { MCPManager } from '../../upstream/manager.js';
import { NameParamsSchema, parseInput } from '../schemas.js';

export interface ToolPinRoutesOptions {
  manager: MCPManager;
}

/**
 * Tool name → the `after.hash` the operator reviewed (from `GET /servers/:name`): a tool whose
 * held definition has changed again since is refused (`TOOL_CHANGED`), not approved unseen.
 */
const HashesSchema = z.record(z.string().min(1), z.string().min(1)).optional();

/** Either the held tools to approve, by the server's own names, or all of them. */
const ApproveBodySchema = z.union(
  [z.object({ tools: z.array(z.string().min(1)).min(1), hashes: HashesSchema }).strict(), z.object({ all: z.literal(true), hashes: HashesSchema }).strict()],
  { error: 'expected {"tools": ["<tool>", …]} or {"all": true}, each with optional "hashes"' },
);

/**
 * Tool pinning (issue #22), an operator action: serves the new definitions of held tools and
 * pins them. Answers which tools were approved and the server's detail after it.
 */
export const toolPinRoutes: FastifyPluginCallback<ToolPinRoutesOptions> = (app, { manager }, done) => {
  app.post('/servers/:name/tools/approve', async (request) => {
    const { name } = parseInput(NameParamsSchema, request.params, 'params');
    const body = parseInput(ApproveBodySchema, request.body ?? {}, 'body');
    const approved = manager.approveTools(name, 'tools' in body ? body.tools : undefined, body.hashes);
    return { approved, server: manager.getServer(name) };
  });

  done();
};
