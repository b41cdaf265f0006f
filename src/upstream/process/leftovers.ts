import type { ChildRecord } from '../../store/child-records.js';
import { hashCmdline, isRunning, readCmdline, signalProcesses, strayDescendants, waitForProcessesExit, type ProcessRef, type ProcStat } from '../../util/process-tree.js';

/**
 * What is left of a recorded stdio child once its daemon is gone, and how it ends: shared by the
 * reaper (leftover-reaper.ts, at the next start) and the watchdog (src/watchdog.ts, the moment
 * the daemon dies). A process is killed only when it is provably the one recorded, by start time
 * and command line; a pid the system has since given to another process is left alone. Imports
 * nothing but /proc reading: the watchdog loads this and little else.
 */

/** Between SIGTERM and SIGKILL, as for a server's own teardown (SPEC §6). */
export const LEFTOVER_GRACE_MS = 1_000;

export type Verdict = { kill: ProcessRef[] } | { skip: string } | { gone: true };

const refOf = (stat: ProcStat): ProcessRef => ({ pid: stat.pid, startTime: stat.startTime });

/**
 * What is left of `record`: the process itself when its start time and command line still
 * match, and then its group's members and the strays found through parent links. A zombie with
 * the recorded start time still holds the pid, so no stranger can have our group id: its members
 * are ours too. Once the pid is free, members carrying that group id can't be told from the
 * group of a stranger that got the pid later, so they are left alone.
 */
export function judgeRecord(record: ChildRecord, byPid: ReadonlyMap<number, ProcStat>, processes: readonly ProcStat[]): Verdict {
  const stat = byPid.get(record.pid);
  if (!stat) {
    const members = processes.some((p) => p.pgid === record.pgid && isRunning(p));
    return members ? { skip: "exited; its group has members, but they cannot be told from a stranger's" } : { gone: true };
  }
  if (stat.startTime !== record.startTime) return isRunning(stat) ? { skip: 'pid reused: the start time differs' } : { gone: true };
  const refs = new Map<number, ProcessRef>();
  if (isRunning(stat)) {
    const cmdline = readCmdline(record.pid);
    if (!cmdline || hashCmdline(cmdline) !== record.cmdlineHash) return { skip: 'pid reused: the command line differs' };
    refs.set(stat.pid, refOf(stat));
  }
  for (const p of processes) if (p.pgid === record.pgid && isRunning(p)) refs.set(p.pid, refOf(p));
  for (const stray of strayDescendants(record.pgid, processes)) refs.set(stray.pid, stray);
  for (const stray of strayDescendants(record.pid, processes)) refs.set(stray.pid, stray);
  return refs.size === 0 ? { gone: true } : { kill: [...refs.values()] };
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group is gone
  }
}

/**
 * SIGTERM to the judged groups and processes, SIGKILL to what still runs after `graceMs`. The
 * groups are signalled as a whole because their leaders were verified (judgeRecord), and a
 * member forked since the scan belongs to them too. Resolves once it is done.
 */
export async function endLeftovers(doomed: readonly ProcessRef[], groups: readonly number[], graceMs = LEFTOVER_GRACE_MS): Promise<void> {
  if (doomed.length === 0) return;
  for (const pgid of groups) signalGroup(pgid, 'SIGTERM');
  signalProcesses(doomed, 'SIGTERM');
  if (await waitForProcessesExit(doomed, graceMs)) return;
  for (const pgid of groups) signalGroup(pgid, 'SIGKILL');
  signalProcesses(doomed, 'SIGKILL');
}
