import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RELATED_TASK_META_KEY, specTypeSchemas, type Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { addAgentKey, agentClient, OPERATOR_TOKEN } from '../helpers/agents.js';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir, waitForFileMatching } from '../helpers/process.js';
import { deferred } from '../../src/util/deferred.js';
import { textOf } from '../helpers/connect.js';
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  ListTasksResultSchema,
  pollTask,
  taskClient,
  TASKS_CAPABILITY,
} from '../helpers/tasks.js';

/**
 * A server's own tasks passed through /mcp (issue #41): `native-tasks` is a 2025-11-25 server that
 * declares task-augmented `tools/call` and runs its tasks itself. A 2025-era agent that declared
 * `capabilities.tasks` asks for a task; the server makes and runs it (its TASK_LOG says so), and
 * the agent's `tasks/*` reach the server's task under Switchboard's id for it.
 */

function createTask(client: Client, name: string, args: Record<string, unknown>) {
  return client.request({ method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
}

async function nativeDaemon(dir: string) {
  const log = join(dir, 'task.log');
  await writeFile(log, '');
  const d = await startDaemon({
    servers: { own: { ...fixtureServerConfig('native-tasks', { env: { TASK_LOG: log } }), protocol: 'legacy', toolPrefix: 'own_' } },
    config: { token: OPERATOR_TOKEN },
  });
  const alice = await addAgentKey(d, { name: 'alice' });
  const bob = await addAgentKey(d, { name: 'bob' });
  return { d, alice, bob, log: async () => (await readFile(log, 'utf8')).trim().split('\n') };
}

describe("a server's own tasks, passed through /mcp", () => {
  it('the server makes and runs the task; tasks/get, tasks/result and tasks/list reach it under our id; another agent cannot see it', async () => {
    const dir = await tempDir();
    const { d, alice, bob, log } = await nativeDaemon(dir);
    const client = await agentClient(d, alice, 'legacy', TASKS_CAPABILITY);
    const notified = deferred<{ taskId: string; status: string }>();
    client.setNotificationHandler('notifications/tasks/status', { params: specTypeSchemas.TaskStatusNotificationParams }, (params) => {
      if (params.status === 'completed') notified.resolve(params);
    });
    const support = Object.fromEntries((await client.listTools()).tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
    expect(support).toMatchObject({ own_native_job: 'optional', own_native_only: 'required' });
    const release = join(dir, 'release');
    const { task } = await createTask(client, 'own_native_job', { untilFile: release, text: 'hi' });
    expect(task).toMatchObject({ status: 'working', ttl: 600_000, pollInterval: 200 });
    // Switchboard's id, not the server's: the server's ids are its own business (and shared by every agent).
    expect(task.taskId).not.toBe('native-1');
    expect(await log()).toEqual(['created native-1 native_job']);
    expect(await client.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema)).toMatchObject({ taskId: task.taskId, status: 'working' });
    const result = client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, CallToolResultSchema);
    await writeFile(release, 'go');
    const payload = await result;
    expect(textOf(payload)).toBe('native: hi');
    expect(payload._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: task.taskId });
    // The server's own status notification reaches the agent whose task it is, under our id.
    expect(await notified.promise).toMatchObject({ taskId: task.taskId, status: 'completed' });
    // The server ran it as its task; no plain call reached it.
    expect(await log()).toEqual(['created native-1 native_job', 'ran native-1']);
    expect(await client.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema)).toMatchObject({ taskId: task.taskId, status: 'completed' });
    const listed = await client.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema);
    expect(listed.tasks).toEqual([expect.objectContaining({ taskId: task.taskId, status: 'completed' })]);
    // Another agent: unknown, by our id and by the server's.
    const other = await agentClient(d, bob, 'legacy', TASKS_CAPABILITY);
    for (const taskId of [task.taskId, 'native-1']) {
      await expect(other.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema)).rejects.toMatchObject({ code: -32602, data: { code: 'TASK_NOT_FOUND' } });
      await expect(other.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema)).rejects.toMatchObject({ code: -32602, data: { code: 'TASK_NOT_FOUND' } });
    }
    expect((await other.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema)).tasks).toEqual([]);
  });

  it("tasks/cancel reaches the server's task; another agent's cancel is refused as unknown", async () => {
    const dir = await tempDir();
    const { d, alice, bob, log } = await nativeDaemon(dir);
    const client = await agentClient(d, alice, 'legacy', TASKS_CAPABILITY);
    const other = await agentClient(d, bob, 'legacy', TASKS_CAPABILITY);
    const { task } = await createTask(client, 'own_native_job', { untilFile: join(dir, 'never') });
    await expect(other.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, CancelTaskResultSchema)).rejects.toMatchObject({
      code: -32602,
      data: { code: 'TASK_NOT_FOUND' },
    });
    const cancelled = await client.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, CancelTaskResultSchema);
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    expect(await log()).toEqual(['created native-1 native_job', 'cancelled native-1']);
    expect(await client.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema)).toMatchObject({ status: 'cancelled' });
  });

  it('a required task tool runs only as a task: without params.task -32601 (TASK_REQUIRED); a client without the tasks capability calls the optional one plainly', async () => {
    const dir = await tempDir();
    const { d, alice, log } = await nativeDaemon(dir);
    const client = await agentClient(d, alice, 'legacy', TASKS_CAPABILITY);
    await expect(client.request({ method: 'tools/call', params: { name: 'own_native_only', arguments: {} } }, CallToolResultSchema)).rejects.toMatchObject({
      code: -32601,
      data: { code: 'TASK_REQUIRED' },
    });
    const { task } = await createTask(client, 'own_native_only', { text: 'only' });
    expect(textOf(await client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, CallToolResultSchema))).toBe('native: only');
    const plain = await agentClient(d, alice, 'legacy');
    expect(textOf(await plain.callTool({ name: 'own_native_job', arguments: { text: 'sync' } }))).toBe('native: sync');
    expect(await log()).toEqual(['created native-1 native_only', 'ran native-1', 'plain native_job']);
  });

  it("a question the server asks of its own task is asked on the client's waiting tasks/result, and the answer reaches the server", async () => {
    const dir = await tempDir();
    const { d, alice } = await nativeDaemon(dir);
    const client = await agentClient(d, alice, 'legacy', { ...TASKS_CAPABILITY, elicitation: { form: {} } });
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { name: 'Ada' } };
    });
    const { task } = await createTask(client, 'own_native_ask', { text: 'Who?' });
    const payload = await client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, CallToolResultSchema);
    expect(textOf(payload)).toBe('native: Ada');
    expect(asked).toEqual(['Who?']);
  });

  it("an extension client's task runs the server's own task to its end: polled to completion, and cancelled at the server", async () => {
    const dir = await tempDir();
    const { d, alice, bob, log } = await nativeDaemon(dir);
    const client = taskClient(d.url, alice);
    // A required task tool: the server's task, followed by the gateway's (the extension's shapes).
    const created = await client.request('tools/call', { name: 'own_native_only', arguments: { text: 'ext' } });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const done = await pollTask(client, created.taskId as string, (task) => task.status !== 'working');
    expect(done).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'native: ext' }] } });
    // The server's id stays the server's: its related-task mark is not passed on.
    expect(done.result).not.toHaveProperty('_meta');
    expect(await log()).toEqual(['created native-1 native_only', 'ran native-1']);
    await expect(taskClient(d.url, bob).request('tasks/get', { taskId: created.taskId as string })).rejects.toMatchObject({ code: -32602, data: { code: 'TASK_NOT_FOUND' } });
    // Cancelled: the server's task is cancelled too.
    const running = await client.request('tools/call', { name: 'own_native_job', arguments: { untilFile: join(dir, 'never') } });
    await waitForFileMatching(join(dir, 'task.log'), (text) => text.includes('created native-2'));
    await client.request('tasks/cancel', { taskId: running.taskId as string });
    expect((await client.request('tasks/get', { taskId: running.taskId as string })).status).toBe('cancelled');
    await waitForFileMatching(join(dir, 'task.log'), (text) => text.includes('cancelled native-2'));
    expect((await log()).slice(2)).toEqual(['created native-2 native_job', 'cancelled native-2']);
  });
});
