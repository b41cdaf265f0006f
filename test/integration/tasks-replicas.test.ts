import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { Client, StreamableHTTPClientTransport, specTypeSchemas } from '@modelcontextprotocol/client';
import type { TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig, startFixtureHttp } from '../helpers/fixtures.js';
import { startReplica } from '../helpers/in-process-replica.js';
import { freshDatabaseUrl } from '../helpers/pg-stores.js';
import { tempDir, waitForFile } from '../helpers/process.js';
import { cleanupStack, sharedByTests } from '../helpers/shared.js';
import { pollTask, taskClient } from '../helpers/tasks.js';

/**
 * Gateway-run tasks on replicas (issue #41): two replicas on one PostgreSQL store. The replica
 * that created a task runs its call and writes each change to the store; the other answers
 * `tasks/get` from there, as a balancer that does not route by `Mcp-Name` needs.
 *
 * Nothing here is about a replica's process: the two replicas are daemons in this process, made
 * as `serve` makes them (test/helpers/in-process-replica.ts), and the three tests share them —
 * each works on tasks of its own (its own release file, its own task ids), and only the second
 * cancels anything.
 */

const TOKEN = 'operator-secret-for-replicas';

interface Pair {
  a: TestDaemon;
  b: TestDaemon;
  /** Where replica a's `jobs` server records a cancellation (the second test's). */
  cancelMarker: string;
  /** The native-tasks server's TASK_LOG (the third test's). */
  taskLog: string;
  close(): Promise<void>;
}

const pair = sharedByTests(
  async (): Promise<Pair> => {
    const stack = cleanupStack();
    try {
      const dir = await tempDir(stack.cleanup);
      const cancelMarker = join(dir, 'cancelled');
      const taskLog = join(dir, 'task.log');
      const native = await startFixtureHttp('native-tasks', { args: ['--http'], env: { TASK_LOG: taskLog } });
      stack.cleanup(() => native.close());
      const url = await freshDatabaseUrl(stack.cleanup);
      const servers = {
        jobs: {
          ...fixtureServerConfig('task-tools', { env: { ONLY: 'slow_compute', CANCEL_MARKER: cancelMarker } }),
          protocol: 'legacy' as const,
          toolPrefix: '',
          tasks: { tools: ['slow_compute'] },
        },
        // One HTTP server both replicas reach, each on a session of its own; its tasks are not bound to a session.
        own: { url: native.url, protocol: 'legacy' as const, toolPrefix: '' },
      };
      const options = { servers, config: { token: TOKEN }, cleanup: stack.cleanup };
      // Started together: each waits on its own servers and database connections, not on the other.
      const [a, b] = await Promise.all([startReplica(url, options), startReplica(url, options)]);
      return { a, b, cancelMarker, taskLog, close: () => stack.run() };
    } catch (err) {
      await stack.run();
      throw err;
    }
  },
  (p) => p.close(),
);

it('a task created on one replica is answered by the other, working and then completed', async () => {
  const dir = await tempDir();
  const { a, b } = await pair();
  const onA = taskClient(a.url, TOKEN);
  const onB = taskClient(b.url, TOKEN);
  const release = join(dir, 'release');
  const created = await onA.request('tools/call', { name: 'slow_compute', arguments: { untilFile: release } });
  expect(created).toMatchObject({ resultType: 'task', status: 'working' });
  const taskId = created.taskId as string;
  expect(await onB.request('tasks/get', { taskId })).toMatchObject({ taskId, status: 'working' });
  await writeFile(release, 'go');
  const done = await pollTask(onB, taskId, (task) => task.status !== 'working');
  expect(done.status).toBe('completed');
  expect(done.result).toMatchObject({ content: [{ type: 'text', text: 'Computed after the signal' }] });
});

it('a cancel sent to the other replica reaches the one running the call, which cancels it on the server', async () => {
  const dir = await tempDir();
  const { a, b, cancelMarker } = await pair();
  const started = join(dir, 'started');
  const { taskId } = await taskClient(a.url, TOKEN).request('tools/call', { name: 'slow_compute', arguments: { untilFile: join(dir, 'never'), startedFile: started } });
  // The task is answered before its call reaches the server: cancel once the server has it.
  await waitForFile(started);
  const onB = taskClient(b.url, TOKEN);
  expect(await onB.request('tasks/cancel', { taskId: taskId as string })).toMatchObject({ resultType: 'complete' });
  // Only replica a runs the call, so only its cancellation can reach the server.
  expect(await waitForFile(cancelMarker)).toContain('cancelled');
  expect((await onB.request('tasks/get', { taskId: taskId as string })).status).toBe('cancelled');
});

/** A 2025-era client of the 2025-11-25 task surface on a replica's /mcp, with the operator's key. */
async function legacyTaskClient(url: string): Promise<Client> {
  const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' }, capabilities: { tasks: { list: {}, cancel: {} } } });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
  onTestFinished(() => client.close());
  return client;
}

it("a server's own task created through one replica is routed by the other, from the store's record, to the server", async () => {
  const dir = await tempDir();
  const { a, b, taskLog } = await pair();
  const onA = await legacyTaskClient(a.url);
  const onB = await legacyTaskClient(b.url);
  const release = join(dir, 'release');
  const { task } = await onA.request(
    { method: 'tools/call', params: { name: 'native_job', arguments: { untilFile: release, text: 'shared' }, task: {} } },
    specTypeSchemas.CreateTaskResult,
  );
  expect(await onB.request({ method: 'tasks/get', params: { taskId: task.taskId } }, specTypeSchemas.GetTaskResult)).toMatchObject({ taskId: task.taskId, status: 'working' });
  const result = onB.request({ method: 'tasks/result', params: { taskId: task.taskId } }, specTypeSchemas.CallToolResult);
  await writeFile(release, 'go');
  expect((await result).content).toEqual([{ type: 'text', text: 'native: shared' }]);
  expect(await waitForFile(taskLog)).toContain('created native-1 native_job');
});
