import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ScriptWorkers, type ScriptWorkersOptions } from '../../../../src/gateway/scripts/script-workers.js';

/** Real worker threads that only wait (a port listener keeps them alive), stopped when the test ends. */
function pool(options: Omit<ScriptWorkersOptions, 'start'> = {}): { workers: ScriptWorkers; made: Worker[] } {
  const made: Worker[] = [];
  const workers = new ScriptWorkers({
    ...options,
    start: () => {
      const worker = new Worker("require('node:worker_threads').parentPort.on('message', () => {})", { eval: true });
      made.push(worker);
      return worker;
    },
  });
  onTestFinished(async () => {
    await workers.close();
    await Promise.all(made.map((worker) => worker.terminate()));
  });
  return { workers, made };
}

describe('ScriptWorkers: code mode keeps workers warm between runs (issue #34)', () => {
  it('hands a worker given back to the next take, and starts one only when none waits', () => {
    const { workers } = pool();
    const first = workers.take();
    workers.giveBack(first);
    expect(workers.idle).toBe(1);
    expect(workers.take()).toBe(first);
    expect(workers.take()).not.toBe(first);
    expect(workers.started).toBe(2);
  });

  it('keeps at most maxIdle waiting: one given back beyond that is stopped', async () => {
    const { workers } = pool({ maxIdle: 1 });
    const [a, b] = [workers.take(), workers.take()];
    workers.giveBack(a);
    const bGone = once(b, 'exit');
    workers.giveBack(b);
    await bGone;
    expect(workers.idle).toBe(1);
    expect(workers.take()).toBe(a);
  });

  it('stops a worker that waited idleMs for a run', async () => {
    const { workers } = pool({ idleMs: 20 });
    const worker = workers.take();
    const gone = once(worker, 'exit');
    workers.giveBack(worker);
    await gone;
    expect(workers.idle).toBe(0);
  });

  it('forgets a waiting worker that exits on its own, so no run is handed a dead one', async () => {
    const { workers } = pool();
    const worker = workers.take();
    workers.giveBack(worker);
    await worker.terminate();
    expect(workers.idle).toBe(0);
    expect(workers.take()).not.toBe(worker);
  });

  it('close stops the waiting workers, and every worker given back after it', async () => {
    const { workers } = pool();
    const [waiting, busy] = [workers.take(), workers.take()];
    workers.giveBack(waiting);
    const waitingGone = once(waiting, 'exit');
    await workers.close();
    await waitingGone;
    const busyGone = once(busy, 'exit');
    workers.giveBack(busy);
    await busyGone;
    expect(workers.idle).toBe(0);
  });
});
