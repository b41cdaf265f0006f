import type { TaskRecord } from './task-record.js';
import { sdk } from '../../upstream/sdk.js';

/**
 * A task as the 2025-11-25 protocol shows it (its core task surface, before SEP-2663 moved tasks
 * into an extension): the same gateway-run task, another wire face. `ttl` and `pollInterval` in
 * ms; the outcome is fetched with `tasks/result`, never inlined.
 */

/** The server capability a 2025-11-25 session is offered: task-augmented `tools/call`, `tasks/list`, `tasks/cancel`. */
export const LEGACY_TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } } as const;

/** The 2025-11-25 `Task`: `tasks/get`'s and `tasks/cancel`'s answer, `tasks/list`'s entries, the status notification's params. */
export function legacyTask(task: TaskRecord): Record<string, unknown> {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttl: task.ttlMs,
    pollInterval: task.pollIntervalMs,
  };
}

/** The 2025-11-25 `CreateTaskResult`: the task under `task`. */
export function legacyCreateTaskResult(task: TaskRecord): Record<string, unknown> {
  return { task: legacyTask(task) };
}

/** A completed task's `tasks/result` answer: the tool's own result, marked as the task's. */
export function legacyTaskPayload(task: TaskRecord & { result: Record<string, unknown> }): Record<string, unknown> {
  const meta = (task.result._meta as Record<string, unknown> | undefined) ?? {};
  // Served on `/mcp` only, which loads the SDK client with itself (http/app.ts).
  return { ...task.result, _meta: { ...meta, [sdk().RELATED_TASK_META_KEY]: { taskId: task.taskId } } };
}
