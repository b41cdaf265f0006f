import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeOnceUnused } from '../helpers/run-tmpdir.js';

/*
 * The end of a run (test/helpers/run-tmpdir.ts): the run's directory is removed once no process
 * names it any more, as a worker's Chromium does (its profile is under it) for a moment after
 * its worker ended. Real processes that write into the directory.
 */

const LINUX = process.platform === 'linux';

/** A node process naming `dir` that writes a file into it every 20 ms: until `stopFile` exists, or for good. */
function writer(dir: string, stopFile?: string) {
  const script = `const fs = require('fs'); const [dir, stop] = process.argv.slice(1); let n = 0;
    const t = setInterval(() => { if (stop && fs.existsSync(stop)) { clearInterval(t); return; } fs.writeFileSync(dir + '/f' + (n++ % 50), 'x'.repeat(4096)); }, 20);
    fs.writeFileSync(dir + '/started', '');`;
  // The directory as Chromium's --user-data-dir names it: a path under it.
  const child = spawn(process.execPath, ['-e', script, `${dir}/`, ...(stopFile ? [stopFile] : [])], { stdio: 'ignore' });
  return { child, exited: once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]> };
}

async function started(dir: string): Promise<void> {
  await expect.poll(() => existsSync(join(dir, 'started'))).toBe(true);
}

describe.skipIf(!LINUX)("the run's directory", () => {
  it('is removed once the process still writing into it has gone by itself', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'run-dir-'));
    const stop = join(tmpdir(), `${process.pid}-stop-${Date.now()}`);
    const { exited } = writer(dir, stop);
    await started(dir);
    // It stops writing and exits a moment later, as a Chromium whose control pipe closed does. Told
    // so by another process: removeOnceUnused blocks this thread, as it does in the 'exit' event.
    spawn(process.execPath, ['-e', `setTimeout(() => require('fs').writeFileSync(${JSON.stringify(stop)}, ''), 300)`], { stdio: 'ignore' });

    removeOnceUnused(dir, 30_000);

    expect(existsSync(dir)).toBe(false);
    expect(await exited).toEqual([0, null]);
  });

  it('is removed after killing a process that still names it when the wait is over', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'run-dir-'));
    const { exited } = writer(dir);
    await started(dir);

    removeOnceUnused(dir, 300);

    expect(existsSync(dir)).toBe(false);
    expect(await exited).toEqual([null, 'SIGKILL']);
  });
});
