import { afterAll, beforeEach } from 'vitest';
import { assertNoWarnings, workerTrap } from '../helpers/warnings.js';

/*
 * Fails any test during which the worker process emitted a warning (see test/helpers/warnings.ts).
 * Runs in every worker (the pool is `forks`), so it sees the daemons, connections and stores the
 * tests build in-process. Spawned `serve` processes are checked by spawnServe itself.
 */

// One listener per worker, even if this file is evaluated again for the next test file.
const trap = workerTrap();

/** `emitWarning` delivers on the next tick; let every pending one arrive first. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

beforeEach(({ onTestFinished, task }) => {
  // Registered first, so it runs last: after the test's own cleanups (daemons closing, …),
  // whose warnings belong to this test too.
  onTestFinished(async () => {
    await settle();
    assertNoWarnings(trap.take(), `test "${task.name}"`);
  });
});

afterAll(async () => {
  await settle();
  assertNoWarnings(trap.take(), 'a hook outside any test (beforeAll/afterAll or module load)');
});
