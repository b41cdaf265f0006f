import { delay } from '../../util/delay.js';
import { isAlive, isRunning, PROC_AVAILABLE, scanProcesses, signalProcesses, strayDescendants, type ProcessRef, type ProcStat } from '../../util/process-tree.js';
import { forgetChild, recordChild } from './child-registry.js';

/**
 * Process-group signalling for stdio servers. Each server is spawned `detached` (its own process
 * group, pgid = pid) so that signalling `-pgid` also reaches what it started: `npx` and
 * `sh -c` wrappers, esbuild services, deliberate helpers. Windows has no process groups; there
 * we fall back to signalling the child alone.
 */

export const PROCESS_GROUPS_SUPPORTED = process.platform !== 'win32';

/** Groups we started and have not seen die, killed synchronously if the daemon exits first. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** A group leader just spawned: tracked for the exit hook, and recorded in the state directory. */
export function trackGroup(pgid: number): void {
  if (!PROCESS_GROUPS_SUPPORTED) return;
  liveGroups.add(pgid);
  recordChild(pgid);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Detached children do not get the terminal's SIGINT; this is the last chance not to orphan them.
    process.once('exit', () => {
      if (liveGroups.size === 0) return;
      // One scan for every group, before any kill (see strayDescendants).
      const processes = scanProcesses();
      const strays = [...liveGroups].flatMap((group) => strayDescendants(group, processes));
      for (const group of liveGroups) signalGroup(group, 'SIGKILL');
      signalProcesses(strays, 'SIGKILL');
    });
  }
}

/** The group's teardown is over: nothing of it is left to kill. */
export function untrackGroup(pgid: number): void {
  liveGroups.delete(pgid);
  forgetChild(pgid);
}

/** Sends `signal` to every process of the group; false when nothing received it. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(PROCESS_GROUPS_SUPPORTED ? -pgid : pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** The group's members that can still run (not zombies), from a /proc snapshot. */
function runningMembers(pgid: number, processes: readonly ProcStat[]): ProcessRef[] {
  return processes.filter((p) => p.pgid === pgid && isRunning(p)).map((p) => ({ pid: p.pid, startTime: p.startTime }));
}

/**
 * Whether any process of the group can still run. `kill(-pgid, 0)` also succeeds while only
 * zombies are left, and orphaned zombies are never reaped when PID 1 does not reap (a Docker
 * container without `--init`, some sandboxes), so on Linux we look for a member that is not one.
 */
export function isGroupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  if (!PROC_AVAILABLE) return true;
  return runningMembers(pgid, scanProcesses()).length > 0;
}

/**
 * Polls until the group is gone or `ms` passed; true when it is gone. On Linux the members are
 * found with one /proc scan and then watched one by one (a stat file each per poll); one more
 * scan at the end catches a member forked meanwhile. Elsewhere `kill(-pgid, 0)` is all there is.
 */
export async function waitForGroupExit(pgid: number, ms: number, pollMs = 25): Promise<boolean> {
  const until = Date.now() + ms;
  if (PROC_AVAILABLE) {
    let members: ProcessRef[] = [];
    for (;;) {
      members = members.filter(isAlive);
      if (members.length === 0) {
        if (!signalGroup(pgid, 0)) return true;
        members = runningMembers(pgid, scanProcesses());
        if (members.length === 0) return true;
      }
      const left = until - Date.now();
      if (left <= 0) return false;
      await delay(Math.min(pollMs, left));
    }
  }
  while (isGroupAlive(pgid)) {
    const left = until - Date.now();
    if (left <= 0) return false;
    await delay(Math.min(pollMs, left));
  }
  return true;
}
