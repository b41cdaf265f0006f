import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statfsSync } from 'node:fs';
import { readCmdline } from '../../src/util/process-tree.js';

/** How long the run's end waits for the processes still using its directory to go. */
const STRAGGLERS_WAIT_MS = 10_000;
const POLL_MS = 100;

/**
 * The tests' state directories (SQLite caches, configs, pid files, nginx and PostgreSQL data,
 * Chromium's profiles) go to tmpfs where the box has one: an fsync on the CI box's disk takes
 * ~3 ms, and every daemon a test starts syncs its SQLite file as it opens, migrates and closes it,
 * with the test's worker blocked meanwhile. Nothing here tests durability across a power cut. Set
 * in the main vitest process before the workers fork, so they and everything they start
 * (os.tmpdir() reads TMPDIR) inherit it; removed when the run ends. Only with room to spare: a
 * container's /dev/shm is often 64 MiB, and PostgreSQL's data alone is 40.
 */
export function tmpfsForTheRun(): void {
  if (process.env.TMPDIR !== undefined || !existsSync('/dev/shm') || freeBytes('/dev/shm') <= 2 ** 30) return;
  const dir = mkdtempSync('/dev/shm/switchboard-tests-');
  // As /tmp is: PostgreSQL's initdb runs as the `postgres` user when the tests run as root.
  chmodSync(dir, 0o1777);
  process.env.TMPDIR = dir;
  process.once('exit', () => removeOnceUnused(dir));
}

/**
 * Removes the run's directory once no process names it any more. A worker's Chromium outlives
 * its worker by a moment: it exits when its control pipe closes (test/helpers/browser.ts),
 * writing its profile under this directory until then. Removed while it still wrote, the
 * directory came back "not empty", and the error, thrown at exit, failed a green run (issue #34,
 * three workers). Synchronous: this runs in the process's 'exit' event.
 */
export function removeOnceUnused(dir: string, waitMs = STRAGGLERS_WAIT_MS): void {
  const until = Date.now() + waitMs;
  let users = processesNaming(dir);
  while (users.length > 0 && Date.now() < until) {
    sleepSync(POLL_MS);
    users = processesNaming(dir);
  }
  for (const { pid, command } of users) {
    process.stderr.write(`killing pid ${pid}, still using ${dir} ${waitMs / 1000} s after the run: ${command}\n`);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  try {
    // The retries cover a killed process's last moment.
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: POLL_MS });
  } catch (err) {
    process.stderr.write(`could not remove the tests' ${dir}: ${String(err)}\n`);
  }
}

/** The processes (not this one) whose command line names `dir`, e.g. Chromium's `--user-data-dir`. */
function processesNaming(dir: string): Array<{ pid: number; command: string }> {
  const found: Array<{ pid: number; command: string }> = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    // undefined: it exited while we looked.
    const command = readCmdline(pid)?.join(' ');
    if (command?.includes(`${dir}/`)) found.push({ pid, command: command.slice(0, 200) });
  }
  return found;
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function freeBytes(path: string): number {
  const { bavail, bsize } = statfsSync(path);
  return bavail * bsize;
}
