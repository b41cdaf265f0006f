import type { Server, ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { SwitchboardError } from '../../errors.js';
import { createTaskResult, detailedTask, type AgentRef, type RequestOptions } from '../../gateway/index.js';
import { mcpAgentTrace } from '../../telemetry/agent-trace.js';
import { toJsonRpcError } from '../errors/jsonrpc-error.js';
import type { AgentServerOptions } from './agent-server-options.js';
import { callerOf } from './request-agent.js';
import { capabilitiesOf, missingExtension, negotiated, taskFace } from './task-face.js';
import { legacyCancel, legacyGet, registerLegacyTaskHandlers } from './legacy-task-handlers.js';

/**
 * The tasks extension on `/mcp` (issue #41, SEP-2663): a `tools/call` of a task-supporting tool
 * from a client that negotiated `io.modelcontextprotocol/tasks` answers a `CreateTaskResult` at
 * once and runs on in the gateway (gateway/tasks/); `tasks/get`, `tasks/update` and
 * `tasks/cancel` reach it. Without the extension a client gets plain synchronous calls, and the
 * task methods answer -32021 (MissingRequiredClientCapability), as the extension requires.
 */

const Meta = z.record(z.string(), z.unknown()).optional();
const TaskIdParams = z.looseObject({ taskId: z.string().min(1), _meta: Meta });
const UpdateParams = z.looseObject({ taskId: z.string().min(1), _meta: Meta, inputResponses: z.record(z.string(), z.unknown()).optional() });

/**
 * A `tools/call` as a task, when the tool runs as one: the `CreateTaskResult` to answer, or
 * undefined for a plain call (a plain tool, or an `optional` one for a client without the extension).
 * A `required` task tool refuses a client without the extension with -32021.
 */
export async function startTask(
  options: AgentServerOptions,
  ctx: ServerContext,
  params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
): Promise<Record<string, unknown> | undefined> {
  const caller = callerOf(ctx, options.session);
  const { nativeTasks } = options.gateway;
  // A server's own task tool: the gateway's task runs the server's task to its end (native-tasks.ts).
  const native = nativeTasks.supportOf(params.name, caller);
  const support = native ?? options.gateway.tasks.supportOf(params.name, caller);
  if (!support) return undefined;
  const capabilities = capabilitiesOf(ctx, params, options);
  if (!negotiated(capabilities)) {
    // A 2025-11-25 task client calls a `required` tool as a task or not at all (-32601, as its era says).
    if (support === 'required')
      throw taskFace(ctx, params, options) === 'legacy'
        ? toJsonRpcError(new SwitchboardError('TASK_REQUIRED', `Tool "${params.name}" runs only as a task: call it with params.task`))
        : missingExtension();
    return undefined;
  }
  try {
    const task = await options.gateway.tasks.create({
      name: params.name,
      arguments: params.arguments,
      agent: caller,
      capabilities,
      ...(native ? { run: (request: RequestOptions) => nativeTasks.runToEnd(params.name, params.arguments, request) } : {}),
      ...(options.gateway.tracing ? { trace: mcpAgentTrace(ctx) } : {}),
    });
    return createTaskResult(task);
  } catch (err) {
    throw toJsonRpcError(err);
  }
}

/**
 * `tasks/get`, `tasks/update`, `tasks/cancel`, each in the face the client negotiated; the 2025-11-25
 * face adds `tasks/result` and `tasks/list` (legacy-task-handlers.ts), unknown methods to the extension.
 */
export function registerTaskHandlers(server: Server, options: AgentServerOptions): void {
  const { gateway } = options;
  const guarded = async (
    ctx: ServerContext,
    params: { _meta?: Record<string, unknown> | undefined },
    work: (agent: AgentRef | undefined) => Promise<Record<string, unknown>>,
  ): Promise<Record<string, unknown>> => {
    if (!negotiated(capabilitiesOf(ctx, params, options))) throw missingExtension();
    try {
      return await work(callerOf(ctx, options.session));
    } catch (err) {
      throw toJsonRpcError(err);
    }
  };
  server.setRequestHandler('tasks/get', { params: TaskIdParams }, (params, ctx) =>
    taskFace(ctx, params, options) === 'legacy'
      ? legacyGet(options, ctx, params.taskId)
      : guarded(ctx, params, async (agent) => detailedTask(await gateway.tasks.get(params.taskId, agent))),
  );
  server.setRequestHandler('tasks/update', { params: UpdateParams }, (params, ctx) =>
    guarded(ctx, params, async (agent) => {
      // The SDK lifts a 2026-07-28 request's `inputResponses` into the context (the MRTR surface).
      const responses = params.inputResponses ?? (ctx.mcpReq.inputResponses as Record<string, unknown> | undefined) ?? {};
      await gateway.tasks.update(params.taskId, agent, responses);
      return { resultType: 'complete' };
    }),
  );
  server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, (params, ctx) =>
    taskFace(ctx, params, options) === 'legacy'
      ? legacyCancel(options, ctx, params.taskId)
      : guarded(ctx, params, async (agent) => {
          await gateway.tasks.cancel(params.taskId, agent);
          return { resultType: 'complete' };
        }),
  );
  registerLegacyTaskHandlers(server, options);
}
