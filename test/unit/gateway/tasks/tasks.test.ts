import type { CallToolResult } from '@modelcontextprotocol/client';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Tasks } from '../../../../src/gateway/tasks/tasks.js';
import type { RequestOptions } from '../../../../src/gateway/requests/pipeline.js';
import { MemoryTaskStore, type TaskStore } from '../../../../src/store/task-store.js';
import { deferred } from '../../../../src/util/deferred.js';
import { ManualClock } from '../../../helpers/manual-clock.js';

/**
 * The tasks room on its own (issue #41): its call is the one edge it is handed (`gateway.call`
 * in the daemon); time is the manual clock, since what is tested is a task's lifetime.
 */
function room(clock: ManualClock, store: TaskStore = new MemoryTaskStore()) {
  const result = deferred<CallToolResult>();
  const calls: RequestOptions[] = [];
  const tasks = new Tasks({
    call: (_name, _args, options) => {
      calls.push(options);
      return result.promise;
    },
    manager: { catalogues: { tools: { get: () => undefined } }, upstream: () => undefined } as never,
    store,
    pollIntervalMs: 50,
    logger: pino({ level: 'silent' }),
    clock,
    ttlMs: 60_000,
  });
  return { tasks, result, calls };
}

const alice = { name: 'alice' } as never;

describe('Tasks', () => {
  it('keeps a finished task with its result for ttlMs after its last change, then forgets it', async () => {
    const clock = new ManualClock();
    const { tasks, result } = room(clock);
    const task = await tasks.create({ name: 'slow', arguments: {}, agent: alice, capabilities: undefined });
    clock.advance(30_000);
    result.resolve({ content: [{ type: 'text', text: 'done' }] });
    await expect.poll(async () => (await tasks.get(task.taskId, alice)).status).toBe('completed');
    clock.advance(59_000);
    expect((await tasks.get(task.taskId, alice)).result).toEqual({ content: [{ type: 'text', text: 'done' }] });
    clock.advance(1_000);
    await expect(tasks.get(task.taskId, alice)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
  });

  it("runs the call with the task's own signal, not a request's, and cancel aborts it", async () => {
    const { tasks, calls } = room(new ManualClock());
    const task = await tasks.create({ name: 'slow', arguments: {}, agent: alice, capabilities: undefined });
    const signal = calls[0]?.signal;
    expect(signal?.aborted).toBe(false);
    await tasks.cancel(task.taskId, alice);
    expect(signal?.aborted).toBe(true);
    expect((await tasks.get(task.taskId, alice)).status).toBe('cancelled');
  });

  it('answers a cancel once the store has it, so another replica asked next reads cancelled', async () => {
    const clock = new ManualClock();
    const shared = new MemoryTaskStore();
    // Writes wait for the test's go, as a slow database would.
    const held: Array<() => void> = [];
    const slow = {
      get: shared.get.bind(shared),
      list: shared.list.bind(shared),
      put: async (...args: Parameters<MemoryTaskStore['put']>) => {
        const go = deferred<void>();
        held.push(go.resolve);
        await go.promise;
        await shared.put(...args);
      },
    };
    const { tasks } = room(clock, slow);
    const other = room(clock, shared).tasks;
    const creating = tasks.create({ name: 'slow', arguments: {}, agent: alice, capabilities: undefined });
    await expect.poll(() => held.length).toBe(1);
    held[0]!();
    const task = await creating;
    let answered = false;
    const cancelling = tasks.cancel(task.taskId, alice).then(() => (answered = true));
    await expect.poll(() => held.length).toBe(2);
    expect(answered).toBe(false);
    expect((await other.get(task.taskId, alice)).status).toBe('working');
    held[1]!();
    await cancelling;
    expect((await other.get(task.taskId, alice)).status).toBe('cancelled');
  });

  it('until waits for a change of a task running here, and reads the store for one running elsewhere at its poll interval, on the clock', async () => {
    const clock = new ManualClock();
    const store = new MemoryTaskStore();
    const { tasks, result } = room(clock, store);
    // Another replica on the same store: the task is not running there.
    const { tasks: elsewhere } = room(clock, store);
    const task = await tasks.create({ name: 'slow', arguments: {}, agent: alice, capabilities: undefined });
    const finished = (t: { status: string }): boolean => t.status === 'completed';
    const here = tasks.until(task.taskId, alice, new AbortController().signal, finished);
    let thereSettled = false;
    const there = elsewhere.until(task.taskId, alice, new AbortController().signal, finished).finally(() => (thereSettled = true));
    // The replica that does not run it reads the store, then waits its poll interval (50 ms here).
    await expect.poll(() => clock.pendingDelays()).toContain(50);
    result.resolve({ content: [{ type: 'text', text: 'done' }] });
    expect((await here).result).toEqual({ content: [{ type: 'text', text: 'done' }] });
    // The task is done, but the other replica reads the store only when its interval is up.
    await new Promise((resolve) => setImmediate(resolve));
    expect(thereSettled).toBe(false);
    clock.advance(50);
    expect((await there).status).toBe('completed');
    // Another agent's wait is refused as an unknown task; an aborted wait rejects with its reason.
    await expect(tasks.until(task.taskId, { name: 'bob' } as never, new AbortController().signal, finished)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
    const waiting = await tasks.create({ name: 'slow2', arguments: {}, agent: alice, capabilities: undefined });
    const controller = new AbortController();
    const aborted = tasks.until(waiting.taskId, alice, controller.signal, () => false);
    controller.abort(new Error('client went away'));
    await expect(aborted).rejects.toThrow('client went away');
  });

  it("list answers an agent's own tasks, newest first, running or kept", async () => {
    const clock = new ManualClock();
    const { tasks, result } = room(clock);
    const first = await tasks.create({ name: 'slow', arguments: {}, agent: alice, capabilities: undefined });
    clock.advance(1_000);
    const second = await tasks.create({ name: 'slow', arguments: {}, agent: alice, capabilities: undefined });
    await tasks.create({ name: 'slow', arguments: {}, agent: { name: 'bob' } as never, capabilities: undefined });
    result.resolve({ content: [] });
    await expect.poll(async () => (await tasks.get(first.taskId, alice)).status).toBe('completed');
    expect((await tasks.list(alice)).map((t) => t.taskId)).toEqual([second.taskId, first.taskId]);
  });
});
