import { describe, expect, it } from 'vitest';
import { NativeTasks } from '../../../../src/gateway/tasks/native-tasks.js';
import type { RequestOptions } from '../../../../src/gateway/requests/pipeline.js';
import type { AgentRequest } from '../../../../src/gateway/requests/request-router.js';
import type { TaskRecord } from '../../../../src/gateway/tasks/task-record.js';
import { MemoryTaskStore } from '../../../../src/store/task-store.js';
import { ManualClock } from '../../../helpers/manual-clock.js';

/**
 * A server's own tasks (issue #41) on their own: the room's one edge is the request path
 * (`gateway.request`), here a recorder answering as a 2025-11-25 task server would.
 */
interface Server {
  era?: 'legacy' | 'modern';
  tasks?: boolean;
  globs?: string[];
}

function room(server: Server = {}, answers: Record<string, Record<string, unknown>> = {}) {
  const store = new MemoryTaskStore();
  const sent: Array<{ request: AgentRequest; options: RequestOptions }> = [];
  const tool = { name: 'own_job', originalName: 'job', server: 'own', execution: { taskSupport: 'optional' } };
  const upstream = {
    connection: { era: server.era ?? 'legacy' },
    capabilities: server.tasks === false ? {} : { tasks: { requests: { tools: { call: {} } } } },
    config: server.globs ? { tasks: { tools: server.globs } } : {},
  };
  const native = new NativeTasks({
    request: async (request, options) => {
      sent.push({ request, options });
      return answers[request.method] ?? {};
    },
    manager: {
      catalogues: { tools: { get: (name: string) => (name === tool.name ? tool : undefined) } },
      upstream: (name: string) => (name === 'own' ? upstream : undefined),
    } as never,
    store,
    clock: new ManualClock(),
    replica: '',
    ttlMs: 60_000,
  });
  return { native, sent, store };
}

const alice = { name: 'alice' } as never;
const SERVER_TASK = { taskId: 'native-7', status: 'working', createdAt: '2026-12-05T18:00:00.000Z', lastUpdatedAt: '2026-12-05T18:00:00.000Z', ttl: 30_000, pollInterval: 500 };

describe('NativeTasks', () => {
  it("is the server's only for a connected 2025-era server declaring task-augmented tools/call, a tool with taskSupport, and no operator glob naming it", () => {
    expect(room().native.supportOf('own_job', alice)).toBe('optional');
    expect(room({ tasks: false }).native.supportOf('own_job', alice)).toBeUndefined();
    expect(room({ era: 'modern' }).native.supportOf('own_job', alice)).toBeUndefined();
    expect(room({ globs: ['j*'] }).native.supportOf('own_job', alice)).toBeUndefined();
    expect(room().native.supportOf('nope', alice)).toBeUndefined();
    const outside = { name: 'bob', view: { allowsTool: () => false } } as never;
    expect(room().native.supportOf('own_job', outside)).toBeUndefined();
  });

  it("sends the call with its task param, records the server's task under an id of ours, and routes later requests to the server's id", async () => {
    const { native, sent, store } = room({}, { 'tools/call': { task: SERVER_TASK }, 'tasks/get': { ...SERVER_TASK, status: 'completed' } });
    const options: RequestOptions = { transport: 'mcp', agent: alice };
    const created = (await native.create({ name: 'own_job', arguments: { n: 1 }, task: { ttl: 30_000 }, options })) as { task: { taskId: string; ttl: number } };
    expect(sent[0]?.request).toEqual({ method: 'tools/call', name: 'own_job', arguments: { n: 1 }, task: { ttl: 30_000 } });
    expect(created.task).toMatchObject({ status: 'working', ttl: 30_000, pollInterval: 500 });
    expect(created.task.taskId).not.toBe('native-7');
    const record = JSON.parse((await store.get(created.task.taskId, 0)) ?? '{}') as TaskRecord;
    expect(record).toMatchObject({ agent: 'alice', tool: 'own_job', native: { server: 'own', taskId: 'native-7' } });
    const got = await native.get(record, options);
    expect(sent[1]?.request).toEqual({ method: 'tasks/get', server: 'own', taskId: 'native-7' });
    expect(got).toMatchObject({ taskId: created.task.taskId, status: 'completed' });
    // The status seen is kept for tasks/list.
    expect((JSON.parse((await store.get(created.task.taskId, 0)) ?? '{}') as TaskRecord).status).toBe('completed');
    // tasks/result waits with no deadline but the client's.
    await native.result(record, options);
    expect(sent[2]).toMatchObject({ request: { method: 'tasks/result', server: 'own', taskId: 'native-7' }, options: { timeoutMs: 0 } });
  });

  it('a server that answers a plain result to a task-augmented call is answered as it is, and nothing is recorded', async () => {
    const plain = { content: [{ type: 'text', text: 'done' }] };
    const { native, store } = room({}, { 'tools/call': plain });
    expect(await native.create({ name: 'own_job', arguments: {}, task: {}, options: { transport: 'mcp', agent: alice } })).toBe(plain);
    expect(await store.list('alice', 0)).toEqual([]);
  });
});
