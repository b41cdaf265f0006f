import type { Clock } from '../util/clock.js';
import { waitFor } from '../util/wait-for.js';
import type { ConnectTask } from './server/upstream.js';

export interface StartupGateOptions {
  /** How long the gate waits for every task before it serves what the cache holds. */
  gateMs: number;
  /** Times the gate (the manager's clock). */
  clock: Clock;
  /** Serves a task still running from the cache; false when the cache holds nothing for it. */
  serveCached: (task: ConnectTask) => boolean;
  /** Settles once what `serveCached` reads is loaded (the store answers asynchronously). @default already loaded */
  cacheRead?: Promise<unknown>;
}

/**
 * The startup gate (SPEC §1.4): wait until every task finished or `gateMs` passed on `clock`,
 * whichever is first. Then each task still running is offered to `serveCached`; those it cannot
 * serve from the cache are awaited, because serving no tools at all would be wrong, not just slow.
 */
export async function passStartupGate(tasks: readonly ConnectTask[], options: StartupGateOptions): Promise<void> {
  const { gateMs, clock, serveCached, cacheRead = Promise.resolve() } = options;
  await waitFor(Promise.allSettled(tasks.map((t) => t.done)), { deadlineMs: gateMs, clock });
  // Only when a task still runs; `serveCached` then runs with no await before it, so a task
  // cannot finish between being found running and being served from the cache.
  if (tasks.some((task) => !task.outcome)) await cacheRead;
  const awaited = tasks.filter((task) => !task.outcome && !serveCached(task)).map((task) => task.done);
  await Promise.allSettled(awaited);
}
