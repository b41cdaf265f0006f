import type { FastifyPluginCallback } from 'fastify';
import { z } from 'zod';
import { AgentNameSchema, AgentSettingsSchema } from '../../config/agent-schema.js';
import { SwitchboardError } from '../../errors.js';
import type { AgentBudgets, AgentInfo, AgentRegistry, BudgetStatus } from '../../gateway/index.js';
import { EmptyBodySchema, parseInput } from '../schemas.js';

export interface AgentRoutesOptions {
  agents: Pick<AgentRegistry, 'list' | 'info' | 'add' | 'rotate' | 'revoke' | 'keysRequired' | 'operatorKeyFile'>;
  /** Token budgets (issue #38): an agent with one shows `spent` (per window: limit, spent, left, resetsAt). @default none shown */
  budgets?: Pick<AgentBudgets, 'status'>;
}

/**
 * Said with the first agent key (issue #36 item 5): until then loopback clients needed no key,
 * from now on every one does — the operator too, with the key kept in `operatorKeyFile`.
 */
export interface FirstKeyNotice {
  message: string;
  /** Where the operator key is; absent when no file could hold it (then configure `token`). */
  operatorKeyFile?: string;
}

function firstKeyNotice(operatorKeyFile: string | undefined): FirstKeyNotice {
  if (operatorKeyFile === undefined) {
    return {
      message: 'This is the first agent key: every client now needs a key. No file holds an operator key for this daemon: set "token" in its config to keep operator access.',
    };
  }
  return {
    message: `This is the first agent key: every client without a key now gets 401. The operator key (for the CLI, the dashboard and other operator tools) is in ${operatorKeyFile}; the switchboard CLI on this machine reads it by itself, and the dashboard asks for it once per tab.`,
    operatorKeyFile,
  };
}

/** `POST /agents`: a name and the same settings as a config entry, never a key (keys are minted). */
const AddAgentBodySchema = AgentSettingsSchema.extend({ name: AgentNameSchema }).strict();
const AgentParamsSchema = z.object({ name: z.string().min(1).max(512) });

/**
 * The operator's routes over agents and keys (issue #22). A new or rotated key is in the answer
 * of `POST /agents` and `POST /agents/:name/rotate` only: it is stored as a salted hash. The
 * registry announces each change (`agent.changed`): the event feeds of ended keys close on it.
 */
export const agentRoutes: FastifyPluginCallback<AgentRoutesOptions> = (app, { agents, budgets }, done) => {
  const withSpent = async (info: AgentInfo): Promise<AgentInfo & { spent?: BudgetStatus }> => {
    const spent = info.budget ? await budgets?.status(info.name) : undefined;
    return spent ? { ...info, spent } : info;
  };

  const infoOf = (name: string) => {
    const info = agents.info(name);
    if (!info) throw new SwitchboardError('AGENT_NOT_FOUND', `No agent named "${name}"`);
    return info;
  };

  app.get('/agents', async () => ({ agents: await Promise.all(agents.list().map(withSpent)) }));

  app.post('/agents', async (request, reply) => {
    const { name, ...settings } = parseInput(AddAgentBodySchema, request.body ?? {}, 'body');
    const open = !agents.keysRequired;
    const added = await agents.add(name, settings);
    return reply.code(201).send(open ? { ...added, firstKey: firstKeyNotice(agents.operatorKeyFile) } : added);
  });

  app.get('/agents/:name', (request) => withSpent(infoOf(parseInput(AgentParamsSchema, request.params, 'params').name)));

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
