import { ProtocolError, ProtocolErrorCode, RELATED_TASK_META_KEY, type JSONRPCRequest, type Result, type Server, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { SwitchboardError } from '../../errors.js';
import { legacyCreateTaskResult, legacyTask, legacyTaskPayload, type AgentRef, type TaskRecord } from '../../gateway/index.js';
import { mcpAgentTrace } from '../../telemetry/agent-trace.js';
import { toJsonRpcError } from '../errors/jsonrpc-error.js';
import type { AgentServerOptions } from './agent-server-options.js';
import { callerOf } from './request-agent.js';
import { taskFace } from './task-face.js';
import { requestOptionsOf } from './tool-call.js';
import { runForAgent } from './agent-channel.js';

/**
 * The 2025-11-25 task surface on `/mcp` (issue #41): a 2025-era session that declared
 * `capabilities.tasks` (and not the extension) sends `tools/call` with `params.task` for a task
 * tool and gets the era's `CreateTaskResult`; `tasks/get`, `tasks/cancel` answer the era's `Task`,
 * `tasks/result` waits for the outcome and answers the tool's own result, `tasks/list` the
 * agent's tasks. The same gateway-run tasks (gateway/tasks/) as the extension's face.
 */

const FINISHED = new Set(['completed', 'failed', 'cancelled']);
const Meta = z.record(z.string(), z.unknown()).optional();
const TaskCall = z.looseObject({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
  task: z.looseObject({ ttl: z.number().optional() }).optional(),
  _meta: Meta,
});
const TaskIdParams = z.looseObject({ taskId: z.string().min(1), _meta: Meta });
const ListParams = z.looseObject({ cursor: z.string().optional(), _meta: Meta }).optional();

async function answered<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw toJsonRpcError(err);
  }
}

/**
 * A task-augmented `tools/call` (`params.task`) of a task tool on the 2025-11-25 face: the
 * `CreateTaskResult`, once the task is stored; each later change of its status is sent on the
 * session as `notifications/tasks/status`. Undefined otherwise: another face, no `task`
 * param, or a tool that does not run as a task (a plain call; the hint is ignored).
 */
export async function startLegacyTask(server: Pick<Server, 'notification'>, options: AgentServerOptions, request: JSONRPCRequest, ctx: ServerContext): Promise<Result | undefined> {
  // Only a 2025-era session has this face; a 2026-07-28 request is not parsed twice.
  if (!options.session) return undefined;
  const parsed = TaskCall.safeParse(request.params);
  if (!parsed.success || taskFace(ctx, parsed.data, options) !== 'legacy') return undefined;
  const { name, arguments: args, task } = parsed.data;
  const caller = callerOf(ctx, options.session);
  // A server's own task tool: its task, passed through (native-tasks.ts).
  const native = options.gateway.nativeTasks.supportOf(name, caller);
  if (native === 'required' && !task) throw toJsonRpcError(new SwitchboardError('TASK_REQUIRED', `Tool "${name}" runs only as a task: call it with params.task`));
  if (!task) return undefined;
  if (native) {
    // The server's own status notifications for this task, on the session's stream; none once it has gone.
    const onStatus = (params: Record<string, unknown>, stop: () => void): void =>
      void server.notification({ method: 'notifications/tasks/status', params: params as never }).catch(stop);
    return answered(() => options.gateway.nativeTasks.create({ name, arguments: args, task, options: requestOptionsOf(ctx, options), onStatus }));
  }
  if (!options.gateway.tasks.supportOf(name, caller)) return undefined;
  return answered(async () =>
    legacyCreateTaskResult(
      await options.gateway.tasks.create({
        name,
        arguments: args,
        agent: caller,
        capabilities: options.session?.clientCapabilities(),
        // The era's optional status notifications, on the session's stream; none once it has gone.
        onStatus: (task) => void server.notification({ method: 'notifications/tasks/status', params: legacyTask(task) }).catch(() => undefined),
        ...(options.gateway.tracing ? { trace: mcpAgentTrace(ctx) } : {}),
      }),
    ),
  );
}

/**
 * `tools/list` on the 2025-11-25 face: each task tool says so (`execution.taskSupport`, as the
 * era's clients read it before sending `params.task`). Other faces get the list as it is.
 */
export function withLegacyTaskSupport<T extends { name: string; execution?: Record<string, unknown> }>(
  options: AgentServerOptions,
  ctx: ServerContext,
  params: { _meta?: Record<string, unknown> } | undefined,
  tools: T[],
): T[] {
  if (taskFace(ctx, params, options) !== 'legacy') return tools;
  const caller = callerOf(ctx, options.session);
  return tools.map((tool) => {
    const support = options.gateway.tasks.supportOf(tool.name, caller);
    return support ? { ...tool, execution: { ...tool.execution, taskSupport: support } } : tool;
  });
}

/** `tasks/get` on the 2025-11-25 face: the era's `Task` (a server's own task: as the server answers it). */
export function legacyGet(options: AgentServerOptions, ctx: ServerContext, taskId: string): Promise<Result> {
  return answered(async () => {
    const task = await options.gateway.tasks.get(taskId, callerOf(ctx, options.session));
    return task.native ? options.gateway.nativeTasks.get(task, requestOptionsOf(ctx, options)) : legacyTask(task);
  });
}

/** `tasks/cancel` on the 2025-11-25 face: the task, now cancelled; a finished one is refused (-32602), as the era says. */
export function legacyCancel(options: AgentServerOptions, ctx: ServerContext, taskId: string): Promise<Result> {
  const agent = callerOf(ctx, options.session);
  return answered(async () => {
    const before = await options.gateway.tasks.get(taskId, agent);
    // A server's own task: the server cancels it, or refuses as it sees fit.
    if (before.native) return options.gateway.nativeTasks.cancel(before, requestOptionsOf(ctx, options));
    if (FINISHED.has(before.status)) {
      throw new SwitchboardError('VALIDATION_FAILED', `Cannot cancel task "${taskId}": it is already ${before.status}`);
    }
    await options.gateway.tasks.cancel(taskId, agent);
    return legacyTask(await options.gateway.tasks.get(taskId, agent));
  });
}

/** `tasks/result` and `tasks/list`: methods of the 2025-11-25 face only (the extension removed them). */
export function registerLegacyTaskHandlers(server: Server, options: AgentServerOptions): void {
  const { gateway } = options;
  const legacyOnly = <T>(ctx: ServerContext, params: { _meta?: Record<string, unknown> } | undefined, work: (agent: AgentRef | undefined) => Promise<T>): Promise<T> => {
    if (taskFace(ctx, params, options) !== 'legacy')
      throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found (tasks/result and tasks/list are the 2025-11-25 task surface: declare capabilities.tasks)');
    return answered(() => work(callerOf(ctx, options.session)));
  };
  server.setRequestHandler('tasks/result', { params: TaskIdParams }, (params, ctx) =>
    legacyOnly(ctx, params, async (agent) => {
      const own = await gateway.tasks.get(params.taskId, agent);
      // A server's own task: its questions on this tasks/result are asked of this client, as a call's are.
      if (own.native) {
        const agent = { continuations: options.continuations, relayStates: options.relayStates, ...(options.session ? { session: options.session } : {}) };
        return runForAgent(ctx, agent, `tasks/result ${params.taskId}`, (channel, signal) =>
          gateway.nativeTasks.result(own, { ...requestOptionsOf(ctx, options), signal, caller: channel }),
        );
      }
      const task = await outcomeOf(options, ctx, params.taskId, agent);
      if (task.status === 'completed' && task.result) return legacyTaskPayload({ ...task, result: task.result });
      // A call that could not be carried out answers its JSON-RPC error, as the plain call would have.
      if (task.status === 'failed' && task.error) throw new ProtocolError(task.error.code, task.error.message, task.error.data);
      throw new SwitchboardError('TASK_CANCELLED', `Task "${params.taskId}" was cancelled: it has no result`);
    }),
  );
  server.setRequestHandler('tasks/list', { params: ListParams }, (params, ctx) =>
    legacyOnly(ctx, params, async (agent) => {
      const tasks = await gateway.tasks.list(agent);
      // A server's own task as the server answers it now; as last seen when it does not answer.
      const request = requestOptionsOf(ctx, options);
      return { tasks: await Promise.all(tasks.map(async (task) => (task.native ? ((await gateway.nativeTasks.refresh(task, request)) ?? legacyTask(task)) : legacyTask(task)))) };
    }),
  );
}

/**
 * Waits for the task's outcome; while it waits for input, its questions are asked on this
 * `tasks/result` (the era's way: related to the task by `_meta`) and the answers given to the task.
 */
async function outcomeOf(options: AgentServerOptions, ctx: ServerContext, taskId: string, agent: AgentRef | undefined): Promise<TaskRecord> {
  const { tasks } = options.gateway;
  for (;;) {
    const task = await tasks.until(taskId, agent, ctx.mcpReq.signal, (t) => FINISHED.has(t.status) || (t.status === 'input_required' && t.inputRequests !== undefined));
    if (FINISHED.has(task.status)) return task;
    for (const [key, question] of Object.entries(task.inputRequests ?? {})) {
      const meta = { ...(question.params?._meta as Record<string, unknown> | undefined), [RELATED_TASK_META_KEY]: { taskId } };
      const answer = await ctx.mcpReq.send({ method: question.method, params: { ...question.params, _meta: meta } } as never);
      await tasks.update(taskId, agent, { [key]: answer });
    }
  }
}
