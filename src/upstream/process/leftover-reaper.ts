import type { Logger } from 'pino';
import { readChildRecords, removeChildRecords, ownIdentity, type OwnerRecord } from '../../store/child-records.js';
import { isAlive, scanProcesses, type ProcessRef, type ProcStat } from '../../util/process-tree.js';
import { endLeftovers, judgeRecord, LEFTOVER_GRACE_MS } from './leftovers.js';

/**
 * At start, kills what a daemon that died without its teardown (SIGKILL, OOM killer, power cut of
 * a container) left running: the stdio children in its record file, their process groups and the
 * helpers that left the group. A process is killed only when it is provably the one recorded, by
 * start time and command line; a pid the system has since given to another process is left alone.
 * Records of a daemon that still runs (another daemon sharing the state directory) are never
 * touched: their children are alive and well looked after. A daemon's watchdog (src/watchdog.ts)
 * does the same the moment its daemon dies; this is for when it died too (a cgroup's OOM kill).
 */

export interface ReapOptions {
  stateDir: string;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** Between SIGTERM and SIGKILL. @default 1000 */
  graceMs?: number;
}

export interface ReapedProcess {
  pid: number;
  pgid: number;
  command: string;
  /** The dead daemon's pid. */
  owner: number;
  /** How many more processes went with it: its group's other members and its strays. */
  others: number;
}

export interface SkippedRecord {
  pid: number;
  owner: number;
  reason: string;
}

export interface ReapReport {
  reaped: ReapedProcess[];
  skipped: SkippedRecord[];
}

function ownerRuns(owner: OwnerRecord, self: OwnerRecord): 'alive' | 'dead' | 'unknown' {
  if (owner.pid === self.pid && owner.startTime === self.startTime) return 'alive';
  // After a reboot nothing the file names can still run; in another pid namespace we cannot tell.
  if (owner.bootId && self.bootId && owner.bootId !== self.bootId) return 'dead';
  if (owner.pidNamespace && self.pidNamespace && owner.pidNamespace !== self.pidNamespace) return 'unknown';
  return isAlive(owner) ? 'alive' : 'dead';
}

/**
 * Reads every record file of `stateDir`, kills the leftovers of dead owners (SIGTERM, SIGKILL
 * after the grace), removes their files and logs what it did. One /proc scan, and only when a
 * dead owner's file exists. Never throws.
 */
export async function reapLeftovers(options: ReapOptions): Promise<ReapReport> {
  const { stateDir, logger } = options;
  const report: ReapReport = { reaped: [], skipped: [] };
  const self = ownIdentity();
  if (!self) return report;
  let processes: ProcStat[] | undefined;
  let byPid: Map<number, ProcStat> | undefined;
  const doomed: ProcessRef[] = [];
  const groups: number[] = [];
  const done: string[] = [];
  for (const entry of readChildRecords(stateDir)) {
    if ('error' in entry) {
      logger.warn({ path: entry.path, err: entry.error }, 'unreadable child process record removed');
      done.push(entry.path);
      continue;
    }
    const { owner, children } = entry.file;
    const runs = ownerRuns(owner, self);
    if (runs !== 'dead') continue;
    done.push(entry.path);
    processes ??= scanProcesses();
    byPid ??= new Map(processes.map((p) => [p.pid, p]));
    for (const record of children) {
      const verdict = judgeRecord(record, byPid, processes);
      if ('skip' in verdict) {
        report.skipped.push({ pid: record.pid, owner: owner.pid, reason: verdict.skip });
      } else if ('kill' in verdict) {
        doomed.push(...verdict.kill);
        groups.push(record.pgid);
        report.reaped.push({ pid: record.pid, pgid: record.pgid, command: record.command, owner: owner.pid, others: verdict.kill.length - 1 });
      }
    }
  }
  for (const skipped of report.skipped) logger.info(skipped, 'left a recorded process alone');
  if (doomed.length > 0) {
    await endLeftovers(doomed, groups, options.graceMs ?? LEFTOVER_GRACE_MS);
    logger.info({ reaped: report.reaped }, 'reaped leftover server processes');
  }
  for (const path of done) {
    try {
      removeChildRecords(path);
    } catch (err) {
      logger.warn({ path, err: String(err) }, 'cannot remove a child process record');
    }
  }
  return report;
}
