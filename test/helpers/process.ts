import { readFileSync, watch } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onTestFinished } from 'vitest';
import { deferred } from '../../src/util/deferred.js';
import { isRunning, readSpawned, readStat, scanProcesses, signalProcesses, type ProcessRef } from '../../src/util/process-tree.js';

/**
 * Whether `pid` is gone. A zombie counts as gone: where PID 1 does not reap orphans (some
 * sandboxes, Docker without --init) a killed grandchild stays a zombie forever, yet it no longer runs.
 */
export function isProcessGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Registers a cleanup: `onTestFinished` inside a test, `afterAll` for what a `beforeAll` made. */
export type Cleanup = (fn: () => void | Promise<void>) => void;

/** A fresh temporary directory, removed when the test finishes (or through `cleanup`). */
export async function tempDir(cleanup: Cleanup = onTestFinished): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-test-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Resolves with the file's content once it exists and is non-empty, watching its directory. */
export function waitForFile(path: string, signal?: AbortSignal): Promise<string> {
  return waitForFileMatching(path, (content) => content !== '', signal);
}

/** Resolves with the file's content once it exists and `match` accepts it, watching its directory. */
export async function waitForFileMatching(path: string, match: (content: string) => boolean, signal?: AbortSignal): Promise<string> {
  const watcher = watch(dirname(path), { signal });
  let pulse = deferred();
  watcher.on('change', () => {
    pulse.resolve();
    pulse = deferred();
  });
  const failed = new Promise<never>((_, reject) => watcher.once('error', reject));
  try {
    for (;;) {
      // Taken before reading, so a change that lands during the read is not missed.
      const next = pulse.promise;
      const content = await readFile(path, 'utf8').catch(() => '');
      if (match(content)) return content;
      await Promise.race([next, failed]);
    }
  } finally {
    watcher.close();
  }
}

export interface PidFile {
  pid: number;
  grandchildPid?: number;
  /** SPAWN_SETSID_GRANDCHILD's helper, in a session and process group of its own. */
  setsidPid?: number;
}

export async function readPidFile(path: string): Promise<PidFile> {
  return JSON.parse(await readFile(path, 'utf8')) as PidFile;
}

/** A process as a reference that stays true to it: its pid and start time (see util/process-tree). */
export function processRef(pid: number): ProcessRef {
  const stat = readStat(pid);
  if (!stat) throw new Error(`no process ${pid}`);
  return { pid, startTime: stat.startTime };
}

/**
 * SIGKILLs these processes when the test finishes, if they still run — each taken by pid and
 * start time now, while it runs. A bare pid is not enough: pids wrap at 32 768 here, and a suite
 * that starts thousands of processes hands a dead fixture's pid to someone else within minutes,
 * once even to another test's daemon watchdog, which then never ended its servers. Pids that are
 * undefined or already gone are skipped.
 */
export function killAtTestEnd(...pids: Array<number | undefined>): void {
  killThrough(onTestFinished, ...pids);
}

/** `killAtTestEnd` through `cleanup`: a concurrent test's own `onTestFinished`, say. */
export function killThrough(cleanup: Cleanup, ...pids: Array<number | undefined>): void {
  const refs = pids.flatMap((pid) => {
    const stat = pid === undefined ? undefined : readStat(pid);
    return stat && isRunning(stat) ? [{ pid: stat.pid, startTime: stat.startTime }] : [];
  });
  cleanup(() => signalProcesses(refs, 'SIGKILL'));
}

/** `killAtTestEnd` for processes already taken as references. */
export function killRefsAtTestEnd(...refs: ProcessRef[]): void {
  onTestFinished(() => signalProcesses(refs, 'SIGKILL'));
}

/** The child watchdog (src/watchdog.ts) that process `parentPid` started, if one runs. */
export function watchdogOf(parentPid: number): ProcessRef | undefined {
  const found = scanProcesses().find((p) => p.ppid === parentPid && isRunning(p) && (readSpawned(p.pid)?.cmdline ?? []).some((arg) => arg.endsWith('watchdog.js')));
  return found && { pid: found.pid, startTime: found.startTime };
}
