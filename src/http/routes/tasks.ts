import type { FastifyPluginCallback } from 'fastify';
import { z } from 'zod';
import { detailedTask, type Gateway } from '../../gateway/index.js';
import { parseInput } from '../schemas.js';

export interface TaskRoutesOptions {
  gateway: Gateway;
}

const TaskParams = z.object({ id: z.string().min(1).max(200) });

/**
 * The operator's look at a task (issue #41): `GET /tasks/:id` answers any agent's task as
 * `tasks/get` would (its status, questions waiting, inlined result or error), with the agent and
 * tool it belongs to; 404 `TASK_NOT_FOUND` when unknown or past its TTL. Agents read their own
 * tasks on `/mcp` (`tasks/get`), never here.
 */
export const taskRoutes: FastifyPluginCallback<TaskRoutesOptions> = (app, { gateway }, done) => {
  app.get('/tasks/:id', async (request) => {
    const { id } = parseInput(TaskParams, request.params, 'params');
    const task = await gateway.tasks.inspect(id);
    const { resultType: _resultType, ...detail } = detailedTask(task);
    return { ...detail, agent: task.agent, tool: task.tool };
  });
  done();
};
