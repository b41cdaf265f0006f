import { join } from 'node:path';
import type { Logger } from 'pino';
import { errorMessage } from '../../errors.js';
import { childRecordsDir, describeChild, ownIdentity, removeChildRecords, writeChildRecords, type ChildRecord, type OwnerRecord } from '../../store/child-records.js';
import { ChildWatchdog } from './child-watchdog.js';

/**
 * The stdio children this process has running, mirrored into the record file of every state
 * directory a daemon of this process uses (see store/child-records.ts). Process-wide, like the
 * process groups in process-group.ts: every child is spawned by this process, and if it dies by
 * SIGKILL they are all orphans, whichever daemon started them. The same records go to the
 * watchdog (child-watchdog.ts), which ends the children the moment this process dies.
 */

interface RecordSink {
  path: string;
  users: number;
  logger: Pick<Logger, 'warn'>;
  /** The last write failed: warn once, retry on the next change. */
  failing: boolean;
}

const live = new Map<number, ChildRecord>();
const sinks = new Map<string, RecordSink>();
let owner: OwnerRecord | undefined | null = null;
const watchdog = new ChildWatchdog();

function identity(): OwnerRecord | undefined {
  if (owner === null) owner = ownIdentity();
  return owner;
}

function flush(sink: RecordSink): void {
  const self = identity();
  if (!self) return;
  try {
    writeChildRecords(sink.path, { version: 1, owner: self, children: [...live.values()] });
    sink.failing = false;
  } catch (err) {
    if (!sink.failing) sink.logger.warn({ path: sink.path, err: errorMessage(err) }, 'cannot record child processes');
    sink.failing = true;
  }
}

/** A child just spawned (synchronously, so the record exists before anything can kill us). */
export function recordChild(pid: number): void {
  const record = describeChild(pid);
  if (!record) return;
  live.set(pid, record);
  watchdog.add(record);
  for (const sink of sinks.values()) flush(sink);
}

/** A child and everything it started are gone. */
export function forgetChild(pid: number): void {
  if (!live.delete(pid)) return;
  watchdog.remove(pid);
  for (const sink of sinks.values()) flush(sink);
}

/**
 * Shutdown: once this process has no stdio child left, its watchdog is ended and waited for, so
 * that nothing of the daemon outlives a clean exit (issue #35 item 5).
 */
export function endChildWatchdog(): Promise<void> {
  return watchdog.end();
}

/**
 * Keeps `<stateDir>/children/<our pid>-<start time>.json` up to date until the returned function
 * is called; the last user of a directory removes the file. A no-op without /proc (no way to
 * verify a process later, so nothing worth recording).
 */
export function keepChildRecords(stateDir: string, logger: Pick<Logger, 'warn'>): () => void {
  const self = identity();
  if (!self) return () => {};
  // Pid and start time: a dead daemon whose pid we were given has a file of its own.
  const path = join(childRecordsDir(stateDir), `${self.pid}-${self.startTime}.json`);
  let sink = sinks.get(path);
  if (!sink) {
    sink = { path, users: 0, logger, failing: false };
    sinks.set(path, sink);
    flush(sink);
  }
  sink.users += 1;
  const kept = sink;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    kept.users -= 1;
    if (kept.users > 0) return;
    sinks.delete(path);
    try {
      removeChildRecords(path);
    } catch (err) {
      logger.warn({ path, err: errorMessage(err) }, 'cannot remove the child process record');
    }
  };
}
