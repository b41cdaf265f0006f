import type { FastifyPluginCallback } from 'fastify';
import { z } from 'zod';
import { AgentNameSchema, AgentSettingsSchema } from '../../config/agent-schema.js';
import { SwitchboardError } from '../../errors.js';
import type { AgentRegistry } from '../../gateway/index.js';
import { EmptyBodySchema, parseInput } from '../schemas.js';

export interface AgentRoutesOptions {
  agents: Pick<AgentRegistry, 'list' | 'info' | 'add' | 'rotate' | 'revoke'>;
}

/** `POST /agents`: a name and the same settings as a config entry, never a key (keys are minted). */
const AddAgentBodySchema = AgentSettingsSchema.extend({ name: AgentNameSchema }).strict();
const AgentParamsSchema = z.object({ name: z.string().min(1).max(512) });

/**
 * The operator's routes over agents and keys (issue #22). A new or rotated key is in the answer
 * of `POST /agents` and `POST /agents/:name/rotate` only: it is stored as a salted hash. The
 * registry announces each change (`agent.changed`): the event feeds of ended keys close on it.
 */
export const agentRoutes: FastifyPluginCallback<AgentRoutesOptions> = (app, { agents }, done) => {
  const infoOf = (name: string) => {
    const info = agents.info(name);
    if (!info) throw new SwitchboardError('AGENT_NOT_FOUND', `No agent named "${name}"`);
    return info;
  };

  app.get('/agents', () => ({ agents: agents.list() }));

  app.post('/agents', async (request, reply) => {
    const { name, ...settings } = parseInput(AddAgentBodySchema, request.body ?? {}, 'body');
    const added = await agents.add(name, settings);
    return reply.code(201).send(added);
  });

  app.get('/agents/:name', (request) => infoOf(parseInput(AgentParamsSchema, request.params, 'params').name));

  app.delete('/agents/:name', async (request) => {
    const { name } = parseInput(AgentParamsSchema, request.params, 'params');
    infoOf(name);
    return { agent: await agents.revoke(name) };
  });

  app.post('/agents/:name/rotate', async (request) => {
    const { name } = parseInput(AgentParamsSchema, request.params, 'params');
    parseInput(EmptyBodySchema, request.body, 'body');
    return agents.rotate(name);
  });

  done();
};
