import { join } from 'node:path';
import { specTypeSchemas } from '@modelcontextprotocol/client';
import { addAgentKey, OPERATOR_TOKEN } from './agents.js';
import { startDaemon, type TestDaemon } from './daemon.js';
import { fixtureServerConfig } from './fixtures.js';
import { tempDir } from './process.js';
import { sharedWithCleanup } from './shared.js';

/**
 * A 2026-07-28 client of the tasks extension (SEP-2663) as raw JSON-RPC POSTs to `/mcp`: the SDK
 * client (2.4) refuses a `resultType: "task"` answer, so the tasks tests read the wire as sent.
 */

/** The tasks extension's id, as a client declares it. */
/** What a 2025-11-25 client that runs tasks declares: `capabilities.tasks`, with list and cancel. */
export const TASKS_CAPABILITY = { tasks: { list: {}, cancel: {} } };

/** The results of the 2025-11-25 task requests, as an SDK client checks them. */
export const {
  CallToolResult: CallToolResultSchema,
  CancelTaskResult: CancelTaskResultSchema,
  CreateTaskResult: CreateTaskResultSchema,
  GetTaskResult: GetTaskResultSchema,
  ListTasksResult: ListTasksResultSchema,
} = specTypeSchemas;

export const TASKS = 'io.modelcontextprotocol/tasks';

export type TaskAnswer = Record<string, unknown> & {
  taskId?: string;
  status?: string;
  resultType?: string;
  result?: Record<string, unknown>;
  inputRequests?: Record<string, { method: string; params?: Record<string, unknown> }>;
  error?: Record<string, unknown>;
};

/** A JSON-RPC error answer, thrown by `TaskClient.request`. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
  }
}

const NAME_FIELD: Record<string, string> = { 'tools/call': 'name', 'tasks/get': 'taskId', 'tasks/update': 'taskId', 'tasks/cancel': 'taskId' };

export interface TaskClient {
  request(method: string, params: Record<string, unknown>): Promise<TaskAnswer>;
}

/**
 * A stateless 2026-07-28 client on `base`'s `/mcp` with `key`; `extension: false` leaves the tasks
 * extension out of its capabilities (it still declares elicitation).
 */
export function taskClient(base: string, key: string, options: { extension?: boolean } = {}): TaskClient {
  const capabilities = { elicitation: { form: {} }, ...(options.extension === false ? {} : { extensions: { [TASKS]: {} } }) };
  let id = 0;
  return {
    async request(method, params) {
      id += 1;
      const field = NAME_FIELD[method];
      const res = await fetch(new URL('/mcp', base), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': method,
          ...(field ? { 'mcp-name': String(params[field]) } : {}),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method,
          params: {
            ...params,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientInfo': { name: 'tasks-test', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': capabilities,
            },
          },
        }),
      });
      const text = await res.text();
      // An SSE answer carries the JSON-RPC response as its last data line.
      const json = text.startsWith('{')
        ? text
        : (
            text
              .split('\n')
              .filter((line) => line.startsWith('data: '))
              .pop() ?? ''
          ).slice(6);
      const body = JSON.parse(json) as { result?: TaskAnswer; error?: { code: number; message: string; data?: unknown } };
      if (body.error) throw new RpcError(body.error.code, body.error.message, body.error.data);
      return body.result as TaskAnswer;
    },
  };
}

/**
 * Polls `tasks/get` (every `intervalMs`, never under 50) until `done` accepts the task: without
 * the listen stream, polling is how the extension's client learns a task's state.
 */
export async function pollTask(client: TaskClient, taskId: string, done: (task: TaskAnswer) => boolean, intervalMs = 100): Promise<TaskAnswer> {
  for (;;) {
    const task = await client.request('tasks/get', { taskId });
    if (done(task)) return task;
    await new Promise((resolve) => setTimeout(resolve, Math.max(50, intervalMs)));
  }
}

/**
 * A daemon whose plain 2025-era server `jobs` (task-tools, no task support of its own, its
 * cancellations written to `<dir>/cancelled`) has its tools named as tasks, `toolPrefix: ""`; and
 * `strict` whose tools are `required` tasks (`strict_*`). Two agents, alice and bob.
 */
export async function taskDaemon(dir: string, options: { lifetime?: 'test' | 'manual' } = {}): Promise<{ d: TestDaemon; alice: string; bob: string }> {
  const d = await startDaemon({
    ...(options.lifetime !== undefined ? { lifetime: options.lifetime } : {}),
    servers: {
      jobs: {
        ...fixtureServerConfig('task-tools', { env: { CANCEL_MARKER: join(dir, 'cancelled') } }),
        protocol: 'legacy',
        toolPrefix: '',
        tasks: { tools: ['slow_compute', 'confirm_delete', 'multi_input', 'failing_job', 'protocol_error_job'] },
      },
      strict: { ...fixtureServerConfig('task-tools', { env: { ONLY: 'failing_job' } }), protocol: 'legacy', toolPrefix: 'strict_', tasks: { tools: ['*'], mode: 'required' } },
    },
    config: { token: OPERATOR_TOKEN },
  });
  return { d, alice: await addAgentKey(d, { name: 'alice' }), bob: await addAgentKey(d, { name: 'bob' }) };
}

/**
 * One `taskDaemon` (and its folder) for the tests of a file or `describe` that each make their own
 * tasks: two task-tools servers per test were most of a tasks file's CPU. Its folder holds the
 * tests' files (`release`, `started`, `cancelled`), so each test names its own; alice and bob are
 * shared, so a test that lists an agent's tasks adds agents of its own.
 */
export function sharedTaskDaemon(): () => Promise<{ d: TestDaemon; alice: string; bob: string; dir: string }> {
  return sharedWithCleanup(async (cleanup) => {
    const dir = await tempDir(cleanup);
    const daemon = await taskDaemon(dir, { lifetime: 'manual' });
    cleanup(() => daemon.d.close());
    return { ...daemon, dir };
  });
}
