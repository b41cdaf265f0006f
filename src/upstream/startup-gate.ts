import { delay } from '../util/delay.js';
import type { ConnectTask } from './server/upstream.js';

/**
 * The startup gate (SPEC §1.4): wait until every task finished or `gateMs` passed, whichever is
 * first. Then each task still running is offered to `serveCached`; those it cannot serve from
 * the cache are awaited, because serving no tools at all would be wrong, not just slow.
 * `cacheRead` settles once what `serveCached` reads is loaded (the store answers asynchronously).
 */
export async function passStartupGate(
  tasks: readonly ConnectTask[],
  gateMs: number,
  serveCached: (task: ConnectTask) => boolean,
  cacheRead: Promise<unknown> = Promise.resolve(),
): Promise<void> {
  const gate = new AbortController();
  try {
    await Promise.race([Promise.allSettled(tasks.map((t) => t.done)), delay(gateMs, gate.signal)]);
  } finally {
    gate.abort();
  }
  // Only when a task still runs; `serveCached` then runs with no await before it, so a task
  // cannot finish between being found running and being served from the cache.
  if (tasks.some((task) => !task.outcome)) await cacheRead;
  const awaited = tasks.filter((task) => !task.outcome && !serveCached(task)).map((task) => task.done);
  await Promise.allSettled(awaited);
}
