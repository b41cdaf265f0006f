import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { delay } from './delay.js';

/**
 * Processes as Linux's /proc shows them: who a process's parent is, which group it is in, and
 * when it started, which together tell a process apart from a later one that got the same pid.
 * Where there is no /proc (macOS, Windows) every function here knows nothing and finds nothing,
 * and teardown falls back to the process group alone.
 */

export const PROC_AVAILABLE = process.platform === 'linux';

/** What /proc/<pid>/stat says about a process. */
export interface ProcStat {
  pid: number;
  ppid: number;
  pgid: number;
  /** One letter: R, S, D, … and Z (zombie) or X (dead) for a process that has finished. */
  state: string;
  /** Field 22: clock ticks after boot. With the pid, it names one process for the life of the system. */
  startTime: number;
}

/** A process as recorded before signalling it: its pid may be reused by the time we do. */
export interface ProcessRef {
  pid: number;
  startTime: number;
}

/** Parses a /proc/<pid>/stat line; the command name in parentheses may hold spaces and parentheses. */
export function parseStat(pid: number, text: string): ProcStat | undefined {
  const close = text.lastIndexOf(')');
  if (close === -1) return undefined;
  // Fields from the 3rd on: state ppid pgrp session tty_nr tpgid flags … starttime (the 22nd).
  const fields = text.slice(close + 2).split(' ');
  const [state, ppid, pgid, startTime] = [fields[0], Number(fields[1]), Number(fields[2]), Number(fields[19])];
  if (!state || !Number.isInteger(ppid) || !Number.isInteger(pgid) || !Number.isInteger(startTime)) return undefined;
  return { pid, ppid, pgid, state, startTime };
}

export function readStat(pid: number): ProcStat | undefined {
  if (!PROC_AVAILABLE) return undefined;
  try {
    return parseStat(pid, readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined; // gone, or never was
  }
}

/** argv as the process was started (NUL-separated in /proc); empty for a zombie or a kernel thread. */
export function readCmdline(pid: number): string[] | undefined {
  if (!PROC_AVAILABLE) return undefined;
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return raw.endsWith('\0') ? raw.slice(0, -1).split('\0') : raw === '' ? [] : raw.split('\0');
  } catch {
    return undefined;
  }
}

/** SHA-256 of the NUL-joined command line: recognises a process later without keeping its arguments. */
export function hashCmdline(cmdline: readonly string[]): string {
  return createHash('sha256').update(cmdline.join('\0')).digest('hex');
}

/** A zombie has finished; only its parent's wait() is missing, and nothing can signal it anyway. */
export function isRunning(stat: ProcStat): boolean {
  return stat.state !== 'Z' && stat.state !== 'X';
}

/** What is read of a process: its /proc files, unless a test gives its own. */
export interface ProcReader {
  stat(pid: number): ProcStat | undefined;
  cmdline(pid: number): string[] | undefined;
}

const PROC_FILES: ProcReader = { stat: readStat, cmdline: readCmdline };
/** How long readSpawned waits, at most, for a process still inside execve. */
const EXEC_WAIT_MS = 100;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * The stat and command line of a process just spawned; undefined when it is gone or finished.
 * spawn() returns once the child's close-on-exec pipe has closed, and the kernel closes it
 * inside execve, before it writes the new program's arguments: read then, /proc/<pid>/cmdline is
 * empty (2 of 6 000 spawns on the 2-core box beside eight CPU-bound processes, none idle). The
 * process runs all the same: it is waited for, in 1 ms steps up to `waitMs` (one that never has a
 * command line, a kernel thread, is undefined after that). Synchronous, for callers that must not
 * yield meanwhile.
 */
export function readSpawned(pid: number, proc: ProcReader = PROC_FILES, waitMs = EXEC_WAIT_MS): { stat: ProcStat; cmdline: string[] } | undefined {
  for (let waited = 0; ; waited += 1) {
    const stat = proc.stat(pid);
    if (!stat || !isRunning(stat)) return undefined;
    const cmdline = proc.cmdline(pid);
    if (cmdline === undefined) return undefined;
    if (cmdline.length > 0) return { stat, cmdline };
    if (waited >= waitMs) return undefined;
    Atomics.wait(pause, 0, 0, 1);
  }
}

/** Every process of the system: one directory read of /proc, one small file read per process. */
export function scanProcesses(): ProcStat[] {
  if (!PROC_AVAILABLE) return [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const processes: ProcStat[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) processes.push(stat);
  }
  return processes;
}

let turnScan: ProcStat[] | undefined;

/**
 * `scanProcesses()`, shared by every caller within one event-loop turn: a reload or shutdown
 * tears down all servers at once, and one scan (about 4 ms with 110 processes on a loaded
 * 2-core box) serves them all. Callers snapshot before they signal, so a scan from the same
 * turn is as good as their own.
 */
export function scanProcessesThisTurn(): ProcStat[] {
  if (!turnScan) {
    turnScan = scanProcesses();
    setImmediate(() => (turnScan = undefined)).unref();
  }
  return turnScan;
}

/**
 * The running descendants of process group `pgid` that are no longer in it: a helper that called
 * `setsid` (or `setpgid`) leaves the group, so signalling the group misses it, but it is still a
 * child of a member. Taken before any signal: once a member dies its children are re-parented
 * (to init) and the link is gone. Members found through the group cover a leader that already
 * died while a wrapper's child lives on.
 */
export function strayDescendants(pgid: number, processes: readonly ProcStat[] = scanProcessesThisTurn()): ProcessRef[] {
  const children = new Map<number, ProcStat[]>();
  for (const stat of processes) {
    const siblings = children.get(stat.ppid);
    if (siblings) siblings.push(stat);
    else children.set(stat.ppid, [stat]);
  }
  const strays: ProcessRef[] = [];
  const seen = new Set<number>();
  const queue = processes.filter((stat) => stat.pgid === pgid || stat.pid === pgid);
  for (const root of queue) seen.add(root.pid);
  while (queue.length > 0) {
    const parent = queue.shift() as ProcStat;
    for (const child of children.get(parent.pid) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      queue.push(child);
      if (child.pgid !== pgid && isRunning(child)) strays.push({ pid: child.pid, startTime: child.startTime });
    }
  }
  return strays;
}

/** Whether `ref` still names the process it was taken from, and that process has not finished. */
export function isAlive(ref: ProcessRef): boolean {
  const stat = readStat(ref.pid);
  return stat !== undefined && stat.startTime === ref.startTime && isRunning(stat);
}

/** Signals each process that is still the one recorded; a pid taken over by another is left alone. */
export function signalProcesses(refs: readonly ProcessRef[], signal: NodeJS.Signals): void {
  for (const ref of refs) {
    if (!isAlive(ref)) continue;
    try {
      process.kill(ref.pid, signal);
    } catch {
      // exited between the check and the signal
    }
  }
}

/**
 * Polls until none of `refs` runs or `ms` passed; true when all are gone. Each poll reads only
 * these processes' stat files, not the whole of /proc.
 */
export async function waitForProcessesExit(refs: readonly ProcessRef[], ms: number, pollMs = 25): Promise<boolean> {
  const until = Date.now() + ms;
  let alive = refs.filter(isAlive);
  while (alive.length > 0) {
    const left = until - Date.now();
    if (left <= 0) return false;
    await delay(Math.min(pollMs, left));
    alive = alive.filter(isAlive);
  }
  return true;
}
