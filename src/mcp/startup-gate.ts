import { delay } from '../util/delay.js';
import type { ServerRecord } from './server-record.js';

/** One server's connect + list, started by `connectServers`. */
export interface ConnectTask {
  record: ServerRecord;
  /** Settles when the attempt finished and its outcome was applied. */
  done: Promise<void>;
  outcome?: { ok: true } | { ok: false; error: string };
}

/**
 * The startup gate (SPEC §1.4): wait until every task finished or `gateMs` passed, whichever is
 * first. Then each task still running is offered to `serveCached`; those it cannot serve from
 * the cache are awaited, because serving no tools at all would be wrong, not just slow.
 */
export async function passStartupGate(
  tasks: readonly ConnectTask[],
  gateMs: number,
  serveCached: (task: ConnectTask) => boolean,
): Promise<void> {
  const gate = new AbortController();
  try {
    await Promise.race([Promise.allSettled(tasks.map((t) => t.done)), delay(gateMs, gate.signal)]);
  } finally {
    gate.abort();
  }
  const awaited = tasks.filter((task) => !task.outcome && !serveCached(task)).map((task) => task.done);
  await Promise.allSettled(awaited);
}
