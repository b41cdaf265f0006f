import { Server, type JSONRPCRequest, type Result, type ServerContext } from '@modelcontextprotocol/server';

/** Answers a `tools/call` as a task before the plain path runs; undefined lets the call run as usual. */
export type TaskStarter = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result | undefined>;

/**
 * The SDK `Server` `/mcp` serves, with one addition through the SDK's own subclass hook
 * (`_wrapHandler`): a 2025-11-25 task-augmented `tools/call` may answer the era's
 * `CreateTaskResult` (`{task}`), which the SDK's 2025 `tools/call` result check — written for
 * `CallToolResult` alone, the SDK having no 2025 task runtime — refuses. Every other answer,
 * plain calls included, still passes that check.
 */
export class TaskServer extends Server {
  /** Set by the agent server: the 2025-11-25 task face (legacy-task-handlers.ts). */
  taskStarter: TaskStarter | undefined;

  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    const wrapped = super._wrapHandler(method, handler);
    if (method !== 'tools/call') return wrapped;
    return async (request, ctx) => (await this.taskStarter?.(request, ctx)) ?? wrapped(request, ctx);
  }
}
