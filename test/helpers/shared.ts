import { afterAll } from 'vitest';
import type { Cleanup } from './process.js';

/**
 * One resource for the tests of a file (or of a `describe`) that only read it: started by the
 * first test that asks for it, closed once they have all run. A daemon and its fixture servers
 * cost real processes, and starting them again for every reading test was most of the suite's
 * CPU on two cores. Call it where `afterAll` may be registered (a module's top level or a
 * `describe` body); a test that changes the resource (config, agents, reloads) starts its own.
 */
export function sharedByTests<T>(start: () => Promise<T>, close: (value: T) => Promise<void>): () => Promise<T> {
  let started: Promise<T> | undefined;
  afterAll(async () => {
    const starting = started;
    started = undefined;
    // A start that failed has already failed the test that asked; nothing to close.
    const value = await starting?.catch(() => undefined);
    if (value !== undefined) await close(value);
  });
  return () => (started ??= start());
}

/**
 * A cleanup (as `tempDir`, `spawnServe` and `startReplica` take one) that collects instead of
 * registering with the test: `run()` calls what was collected, last in first out, as vitest runs
 * a test's `onTestFinished` callbacks. For what a `sharedByTests` start makes, closed by its `close`.
 */
export function cleanupStack(): { cleanup: (fn: () => void | Promise<void>) => void; run(): Promise<void> } {
  const stack: Array<() => void | Promise<void>> = [];
  return {
    cleanup: (fn) => void stack.push(fn),
    async run() {
      const errors: unknown[] = [];
      for (let fn = stack.pop(); fn !== undefined; fn = stack.pop()) {
        try {
          await fn();
        } catch (err) {
          errors.push(err);
        }
      }
      if (errors.length > 0) throw new AggregateError(errors, 'cleanup failed');
    },
  };
}

/**
 * Starts `sharedByTests` resources now, all at once, without waiting for them: for a file's
 * `beforeAll`, where each test would otherwise start its own in turn, its worker idle while a
 * process starts (node's own start, a fixture's handshake). A resource only one test uses (one
 * it reloads, cancels or closes) is a `sharedByTests` of that one test, started ahead with the
 * rest. A start that fails fails the test that asks for it, as before; here it is only marked
 * handled.
 */
export function startAhead(...starts: Array<() => Promise<unknown>>): void {
  for (const start of starts) start().catch(() => undefined);
}

/**
 * `sharedByTests` for a start that makes several things (fixtures, temp dirs, a daemon): each is
 * registered with the `cleanup` it is given, and they are all closed, last first, after the tests
 * (or at once, if the start fails).
 */
export function sharedWithCleanup<T>(start: (cleanup: Cleanup) => Promise<T>): () => Promise<T> {
  const stack = cleanupStack();
  return sharedByTests(
    async () => {
      try {
        return await start(stack.cleanup);
      } catch (err) {
        await stack.run();
        throw err;
      }
    },
    () => stack.run(),
  );
}
