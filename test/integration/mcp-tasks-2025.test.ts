import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RELATED_TASK_META_KEY, specTypeSchemas, type Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { addAgentKey, agentClient } from '../helpers/agents.js';
import { waitForFile } from '../helpers/process.js';
import { textOf } from '../helpers/connect.js';
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  ListTasksResultSchema,
  sharedTaskDaemon,
  TASKS_CAPABILITY,
} from '../helpers/tasks.js';

/**
 * The 2025-11-25 task surface on /mcp (issue #41): SDK clients on 2025-era sessions that declared
 * `capabilities.tasks` get the same gateway-run tasks as the extension's clients, in the era's
 * shapes — `CreateTaskResult {task}`, `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`.
 */

function createTask(client: Client, name: string, args: Record<string, unknown>) {
  return client.request({ method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
}

describe('the 2025-11-25 task surface on /mcp', () => {
  /** One task daemon for the tests that each make and read their own tasks. */
  const sharedTasks = sharedTaskDaemon();

  it("a task-augmented call answers CreateTaskResult at once; tasks/get polls it, tasks/result waits for the tool result, tasks/list shows only its agent's tasks", async () => {
    const { d, dir } = await sharedTasks();
    // tasks/list shows all of an agent's tasks, and the daemon is shared: agents of this test's own.
    const alice = await addAgentKey(d, { name: 'lister' });
    const bob = await addAgentKey(d, { name: 'other-lister' });
    const client = await agentClient(d, alice, 'legacy', TASKS_CAPABILITY);
    const statuses: string[] = [];
    let onCompleted = (): void => undefined;
    const completedNotice = new Promise<void>((resolve) => (onCompleted = resolve));
    client.setNotificationHandler('notifications/tasks/status', { params: specTypeSchemas.TaskStatusNotificationParams }, (params) => {
      statuses.push(params.status);
      if (params.status === 'completed') onCompleted();
    });
    expect(client.getServerCapabilities()?.tasks).toMatchObject({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    // The task tools say so, as the era's clients read it.
    const support = Object.fromEntries((await client.listTools()).tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
    expect(support).toMatchObject({ slow_compute: 'optional', confirm_delete: 'optional', strict_failing_job: 'required' });
    const release = join(dir, 'release');
    const { task } = await createTask(client, 'slow_compute', { untilFile: release });
    expect(task).toMatchObject({ status: 'working', ttl: expect.any(Number), pollInterval: expect.any(Number) });
    expect(await client.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema)).toMatchObject({ taskId: task.taskId, status: 'working' });
    // tasks/result blocks until the task is finished: started before the release, it answers after.
    const result = client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, CallToolResultSchema);
    await writeFile(release, 'go');
    const payload = await result;
    expect(textOf(payload)).toBe('Computed after the signal');
    expect(payload._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: task.taskId });
    expect(await client.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema)).toMatchObject({ status: 'completed' });
    // The status change came as notifications/tasks/status on the session.
    await completedNotice;
    expect(statuses).toContain('completed');
    // tasks/list: alice's tasks only; bob's own task is his, and alice's is unknown to him.
    const other = await agentClient(d, bob, 'legacy', TASKS_CAPABILITY);
    const { task: bobs } = await createTask(other, 'slow_compute', { seconds: 0 });
    const listed = await client.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema);
    expect(listed.tasks.map((t) => t.taskId)).toEqual([task.taskId]);
    expect((await other.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema)).tasks.map((t) => t.taskId)).toEqual([bobs.taskId]);
    await expect(other.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema)).rejects.toMatchObject({
      code: -32602,
      data: { code: 'TASK_NOT_FOUND' },
    });
    // A `required` task tool called without params.task: -32601, as the era says.
    await expect(client.request({ method: 'tools/call', params: { name: 'strict_failing_job', arguments: {} } }, CallToolResultSchema)).rejects.toMatchObject({
      code: -32601,
      data: { code: 'TASK_REQUIRED' },
    });
  });

  it('tasks/cancel cancels the call on the server and answers the cancelled task; tasks/result then says TASK_CANCELLED', async () => {
    const { d, alice, dir } = await sharedTasks();
    const client = await agentClient(d, alice, 'legacy', TASKS_CAPABILITY);
    const started = join(dir, 'started');
    const { task } = await createTask(client, 'slow_compute', { untilFile: join(dir, 'never'), startedFile: started });
    // The task is answered before its call reaches the server: cancel once the server has it.
    await waitForFile(started);
    const cancelled = await client.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, CancelTaskResultSchema);
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    // The server's own record of the cancellation (notifications/cancelled reached it).
    expect(await waitForFile(join(dir, 'cancelled'))).toContain('cancelled');
    await expect(client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, CallToolResultSchema)).rejects.toMatchObject({
      code: -32602,
      data: { code: 'TASK_CANCELLED' },
    });
    // A finished task cannot be cancelled again (-32602), as the 2025-11-25 spec says.
    await expect(client.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, CancelTaskResultSchema)).rejects.toMatchObject({ code: -32602 });
  });

  it("a question the server asks mid-call is asked on tasks/result, related to the task, and the client's answer reaches the server", async () => {
    const { d, alice } = await sharedTasks();
    const client = await agentClient(d, alice, 'legacy', { ...TASKS_CAPABILITY, elicitation: { form: {} } });
    const asked: { message: string; related: unknown }[] = [];
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push({ message: request.params.message, related: request.params._meta?.[RELATED_TASK_META_KEY] });
      return { action: 'accept', content: { confirm: true } };
    });
    const { task } = await createTask(client, 'confirm_delete', { filename: 'a.txt' });
    const payload = await client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, CallToolResultSchema);
    expect(textOf(payload)).toBe('Deleted a.txt');
    expect(asked).toEqual([{ message: 'Delete a.txt?', related: { taskId: task.taskId } }]);
  });

  it('a failed call answers tasks/result with its JSON-RPC error', async () => {
    const { d, alice } = await sharedTasks();
    const client = await agentClient(d, alice, 'legacy', TASKS_CAPABILITY);
    const { task } = await createTask(client, 'protocol_error_job', {});
    await expect(client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, CallToolResultSchema)).rejects.toMatchObject({
      message: expect.stringContaining('The job crashed'),
    });
  });

  it('a client that did not declare the tasks capability gets the plain result, and tasks/list is unknown to it', async () => {
    const { d, alice } = await sharedTasks();
    const client = await agentClient(d, alice, 'legacy');
    const plain = await client.request({ method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0 }, task: { ttl: 60_000 } } }, CallToolResultSchema);
    expect(textOf(plain)).toBe('Computed after 0 s');
    expect(plain).not.toHaveProperty('task');
    expect((await client.listTools()).tools.find((tool) => tool.name === 'slow_compute')?.execution).toBeUndefined();
    await expect(client.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema)).rejects.toMatchObject({ code: -32601 });
  });
});
