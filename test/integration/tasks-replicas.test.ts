import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/process.js';
import { replicaCluster, TOKEN } from '../helpers/replica-cluster.js';
import { pollTask, taskClient } from '../helpers/tasks.js';

/**
 * Gateway-run tasks on replicas (issue #41): two `switchboard serve` processes on one PostgreSQL
 * store. The replica that created a task runs its call and writes each change to the store; the
 * other answers `tasks/get` from there, as a balancer that does not route by `Mcp-Name` needs.
 */
it('a task created on one replica is answered by the other, working and then completed', async () => {
  const dir = await tempDir();
  const replicas = await replicaCluster({
    jobs: { ...fixtureServerConfig('task-tools', { env: { ONLY: 'slow_compute' } }), protocol: 'legacy', toolPrefix: '', tasks: { tools: ['slow_compute'] } },
  });
  const [a, b] = [await replicas.start(), await replicas.start()];
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
