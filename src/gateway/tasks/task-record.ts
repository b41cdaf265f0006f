/**
 * A task as SEP-2663 (`io.modelcontextprotocol/tasks`) describes it, and the shapes it takes on the
 * wire: the flat `CreateTaskResult` (`resultType: "task"`) and `tasks/get`'s DetailedTask, whose
 * finished result or protocol error is inlined (there is no `tasks/result` in the extension).
 */

/** The extension's identifier, under `capabilities.extensions` on both sides. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** A question the call's server asked, waiting for the client's `tasks/update`. */
export interface TaskInputRequest {
  method: string;
  params?: Record<string, unknown>;
}

/** A JSON-RPC error, as a failed task carries it. */
export interface TaskError {
  code: number;
  message: string;
  data?: unknown;
}

/** One task: what `tasks/get` answers from, on any replica (it is kept in the store). */
export interface TaskRecord {
  taskId: string;
  /** The agent that created it ('' without agent keys): only it sees the task. */
  agent: string;
  /** The tool called, as the agent named it. */
  tool: string;
  status: TaskStatus;
  statusMessage?: string;
  /** ISO times. */
  createdAt: string;
  lastUpdatedAt: string;
  /** How long the task is kept after its creation, in ms. */
  ttlMs: number;
  pollIntervalMs: number;
  /** The replica running the call (issue #28): a cancel elsewhere is relayed to it. */
  replica: string;
  inputRequests?: Record<string, TaskInputRequest>;
  result?: Record<string, unknown>;
  error?: TaskError;
  /**
   * A server's own task passed through (issue #41): the server and its id for the task. Such a
   * record only maps the id and its owner; the server answers for the task's state.
   */
  native?: { server: string; taskId: string };
}

export function isTerminal(status: TaskStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** The `Task` base every task answer carries. */
function taskBase(task: TaskRecord): Record<string, unknown> {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
  };
}

/** The answer of a `tools/call` that became a task: flat, no nested `task` key. */
export function createTaskResult(task: TaskRecord): Record<string, unknown> {
  return { resultType: 'task', ...taskBase(task) };
}

/** `tasks/get`'s DetailedTask: the result or error inlined once terminal, the questions while waiting. */
export function detailedTask(task: TaskRecord): Record<string, unknown> {
  return {
    resultType: 'complete',
    ...taskBase(task),
    ...(task.status === 'input_required' && task.inputRequests ? { inputRequests: task.inputRequests } : {}),
    ...(task.status === 'completed' && task.result ? { result: task.result } : {}),
    ...(task.status === 'failed' && task.error ? { error: task.error } : {}),
  };
}
