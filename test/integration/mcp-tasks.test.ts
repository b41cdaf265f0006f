import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addAgentKey, OPERATOR_TOKEN } from '../helpers/agents.js';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { waitForFile } from '../helpers/process.js';
import { pollTask, sharedTaskDaemon, taskClient } from '../helpers/tasks.js';

/**
 * Gateway-run tasks (issue #41): a plain 2025-era server (task-tools, no task support of its own)
 * whose tools the config names as tasks; agents on /mcp that negotiated io.modelcontextprotocol/tasks.
 */
const textOf = (result: Record<string, unknown> | undefined): string => ((result?.content as { text: string }[] | undefined) ?? []).map((part) => part.text).join('');

describe('gateway-run tasks on /mcp', () => {
  /** One task daemon for the tests that each make and read their own tasks. */
  const sharedTasks = sharedTaskDaemon();

  it('a long call becomes a task at once, survives being polled, and completes with its result inlined', async () => {
    const { d, alice, dir } = await sharedTasks();
    const client = taskClient(d.url, alice);
    const release = join(dir, 'release');
    const created = await client.request('tools/call', { name: 'slow_compute', arguments: { untilFile: release } });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    expect(created).not.toHaveProperty('task');
    expect(Number.isInteger(created.ttlMs) && Number.isInteger(created.pollIntervalMs)).toBe(true);
    const taskId = created.taskId as string;
    const working = await client.request('tasks/get', { taskId });
    expect(working).toMatchObject({ resultType: 'complete', taskId, status: 'working' });
    expect(working).not.toHaveProperty('result');
    await writeFile(release, 'go');
    const done = await pollTask(client, taskId, (task) => task.status !== 'working');
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe('Computed after the signal');
  });

  it('a client without the extension gets a plain result from an optional task tool, -32021 from a required one and from tasks/*', async () => {
    const { d, alice } = await sharedTasks();
    const plain = taskClient(d.url, alice, { extension: false });
    const result = await plain.request('tools/call', { name: 'slow_compute', arguments: { seconds: 0 } });
    expect(result.resultType).toBe('complete');
    expect(textOf(result)).toBe('Computed after 0 s');
    // A `required` task tool refuses it, naming the extension.
    await expect(plain.request('tools/call', { name: 'strict_failing_job', arguments: {} })).rejects.toMatchObject({ code: -32021 });
    await expect(plain.request('tasks/get', { taskId: 'whatever' })).rejects.toMatchObject({
      code: -32021,
      data: { code: 'TASKS_NOT_NEGOTIATED', requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
    });
  });

  it('tasks/cancel cancels the call on the server, and the task reads cancelled', async () => {
    const { d, alice, dir } = await sharedTasks();
    const client = taskClient(d.url, alice);
    const started = join(dir, 'started');
    const created = await client.request('tools/call', { name: 'slow_compute', arguments: { untilFile: join(dir, 'never'), startedFile: started } });
    const taskId = created.taskId as string;
    // The task is answered before its call reaches the server; a cancel sent sooner stops the call
    // before it is sent, so the server would have nothing to record (a flake on a quiet box).
    await waitForFile(started);
    expect(await client.request('tasks/cancel', { taskId })).toEqual(expect.objectContaining({ resultType: 'complete' }));
    // The server's own record of the cancellation (notifications/cancelled reached it).
    expect(await waitForFile(join(dir, 'cancelled'))).toContain('cancelled');
    expect((await client.request('tasks/get', { taskId })).status).toBe('cancelled');
    // Idempotent on a finished task.
    expect(await client.request('tasks/cancel', { taskId })).toEqual(expect.objectContaining({ resultType: 'complete' }));
  });

  it('a question the server asks mid-call puts the task in input_required, and tasks/update answers it', async () => {
    const { d, alice } = await sharedTasks();
    const client = taskClient(d.url, alice);
    const created = await client.request('tools/call', { name: 'confirm_delete', arguments: { filename: 'a.txt' } });
    const taskId = created.taskId as string;
    const waiting = await pollTask(client, taskId, (task) => task.status !== 'working');
    expect(waiting.status).toBe('input_required');
    const [key, question] = Object.entries(waiting.inputRequests ?? {})[0] ?? [];
    expect(question).toMatchObject({ method: 'elicitation/create', params: { message: 'Delete a.txt?' } });
    expect(await client.request('tasks/update', { taskId, inputResponses: { [key as string]: { action: 'accept', content: { confirm: true } } } })).toEqual(
      expect.objectContaining({ resultType: 'complete' }),
    );
    const done = await pollTask(client, taskId, (task) => task.status === 'completed' || task.status === 'failed');
    expect(textOf(done.result)).toBe('Deleted a.txt');
  });

  it('another agent cannot see, update or cancel the task', async () => {
    const { d, alice, bob, dir } = await sharedTasks();
    const mine = taskClient(d.url, alice);
    const theirs = taskClient(d.url, bob);
    const { taskId } = await mine.request('tools/call', { name: 'slow_compute', arguments: { untilFile: join(dir, 'never') } });
    for (const method of ['tasks/get', 'tasks/cancel']) {
      await expect(theirs.request(method, { taskId: taskId as string })).rejects.toMatchObject({ code: -32602, data: { code: 'TASK_NOT_FOUND' } });
    }
    expect((await mine.request('tasks/get', { taskId: taskId as string })).status).toBe('working');
    // The operator sees anyone's task, with whose it is; an unknown id is TASK_NOT_FOUND.
    const seen = await d.json<Record<string, unknown>>(`/tasks/${taskId as string}`);
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ taskId, status: 'working', agent: 'alice', tool: 'slow_compute' });
    expect((await d.json<{ error: { code: string } }>('/tasks/nope')).body.error.code).toBe('TASK_NOT_FOUND');
  });

  it("a tool's own error completes the task with isError; a protocol error fails it with the error inlined", async () => {
    const { d, alice } = await sharedTasks();
    const client = taskClient(d.url, alice);
    const failing = await client.request('tools/call', { name: 'failing_job', arguments: {} });
    const crashed = await client.request('tools/call', { name: 'protocol_error_job', arguments: {} });
    const toolError = await pollTask(client, failing.taskId as string, (task) => task.status !== 'working');
    expect(toolError).toMatchObject({ status: 'completed', result: { isError: true } });
    const protocolError = await pollTask(client, crashed.taskId as string, (task) => task.status !== 'working');
    expect(protocolError.status).toBe('failed');
    expect(protocolError.error).toMatchObject({ code: expect.any(Number), message: expect.stringContaining('The job crashed') });
    expect(protocolError).not.toHaveProperty('result');
  });

  it('a tool its server lists with execution.taskSupport "optional" runs as a task without any tasks setting; its other tools stay plain', async () => {
    const d = await startDaemon({
      servers: {
        own: { ...fixtureServerConfig('task-tools', { env: { ONLY: 'greet,failing_job', NATIVE_TASKS: 'greet,failing_job:required' } }), protocol: 'legacy', toolPrefix: 'own_' },
        // The operator's setting wins over what the server declares.
        ruled: {
          ...fixtureServerConfig('task-tools', { env: { ONLY: 'greet', NATIVE_TASKS: 'greet' } }),
          protocol: 'legacy',
          toolPrefix: 'ruled_',
          tasks: { tools: ['greet'], mode: 'required' },
        },
      },
      config: { token: OPERATOR_TOKEN },
    });
    const alice = await addAgentKey(d, { name: 'alice' });
    const client = taskClient(d.url, alice);
    const created = await client.request('tools/call', { name: 'own_greet', arguments: { name: 'Ada' } });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const done = await pollTask(client, created.taskId as string, (task) => task.status !== 'working');
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe('Hello, Ada!');
    // A tool declared `required` is the server's own task tool: not made a gateway task (a plain call it may refuse).
    const plain = await client.request('tools/call', { name: 'own_failing_job', arguments: {} });
    expect(plain).toMatchObject({ resultType: 'complete', isError: true });
    // A client without the extension calls the declared task tool plainly; the operator's `required` refuses it.
    const withoutExtension = taskClient(d.url, alice, { extension: false });
    const sync = await withoutExtension.request('tools/call', { name: 'own_greet', arguments: { name: 'Bo' } });
    expect(textOf(sync)).toBe('Hello, Bo!');
    await expect(withoutExtension.request('tools/call', { name: 'ruled_greet', arguments: { name: 'Cy' } })).rejects.toMatchObject({ code: -32021 });
  });
});
