import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { isProcessGone, readPidFile, tempDir, waitForFile, type PidFile } from '../helpers/process.js';
import { spawnServe } from '../helpers/serve-process.js';

/*
 * SPEC §6 "No orphans, ever", against real processes: a helper that left the server's process
 * group (setsid) goes with the server, and a server left running by a daemon killed with SIGKILL
 * is reaped by the next daemon that starts on the same state directory.
 */

const LINUX = process.platform === 'linux';
/** Two real daemon processes and their fixtures: a loaded two-core box needs the time. */
const SPAWN_TIMEOUT_MS = 60_000;

/** Kills whatever the test leaves running, whatever happened to the daemon. */
function killAtEnd(fixture: PidFile): void {
  onTestFinished(() => {
    for (const pid of [fixture.pid, fixture.grandchildPid, fixture.setsidPid]) {
      if (pid !== undefined && !isProcessGone(pid)) process.kill(pid, 'SIGKILL');
    }
  });
}

describe.skipIf(!LINUX)('no orphans', () => {
  it('POST /servers/:name/disconnect also ends a helper that left the process group (setsid)', async () => {
    const dir = await tempDir();
    const pidFile = join(dir, 'echo.pid');
    const sb = await startDaemon({
      servers: { echo: fixtureServerConfig('echo-stdio', { env: { PID_FILE: pidFile, SPAWN_SETSID_GRANDCHILD: '1' } }) },
    });
    const fixture = await readPidFile((await waitForFile(pidFile), pidFile));
    killAtEnd(fixture);
    expect(isProcessGone(fixture.setsidPid!)).toBe(false);

    const res = await sb.json<{ status: string }>('/servers/echo/disconnect', { method: 'POST' });

    expect(res.status).toBe(200);
    expect(res.body.status).toBe('disconnected');
    expect(isProcessGone(fixture.pid)).toBe(true);
    expect(isProcessGone(fixture.setsidPid!)).toBe(true);
  });

  it('a server left running by a SIGKILLed daemon is reaped by the next start on the same state directory', async () => {
    const dir = await tempDir();
    const configPath = join(dir, 'switchboard.json');
    /** The config of each run: the same state directory, the server's pids in a file of its own. */
    const configure = (pidFile: string) => {
      const stubborn = fixtureServerConfig('echo-stdio', { env: { PID_FILE: pidFile, IGNORE_STDIN_EOF: '1', SPAWN_SETSID_GRANDCHILD: '1' } });
      return writeFile(configPath, JSON.stringify({ dbPath: join(dir, 'state', 'cache.db'), mcpServers: { stubborn } }));
    };

    await configure(join(dir, 'first.pid'));
    const first = spawnServe(['--config', configPath, '--port', '0'], { home: dir, cwd: dir });
    await first.waitForLog((entry) => entry.msg === 'ready');
    const leftover = await readPidFile((await waitForFile(join(dir, 'first.pid')), join(dir, 'first.pid')));
    killAtEnd(leftover);

    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // Its stdin is closed now, and it does not care: without the reaper it would run forever.
    expect(isProcessGone(leftover.pid)).toBe(false);
    expect(isProcessGone(leftover.setsidPid!)).toBe(false);

    await configure(join(dir, 'second.pid'));
    const second = spawnServe(['--config', configPath, '--port', '0'], { home: dir, cwd: dir });
    const reaped = await second.waitForLog((entry) => entry.msg === 'reaped leftover server processes');

    expect(reaped.reaped).toEqual([
      { pid: leftover.pid, pgid: leftover.pid, command: 'node', owner: first.child.pid, others: 1 },
    ]);
    expect(isProcessGone(leftover.pid)).toBe(true);
    expect(isProcessGone(leftover.setsidPid!)).toBe(true);
    // The second daemon's own server is untouched by it.
    const current = await readPidFile((await waitForFile(join(dir, 'second.pid')), join(dir, 'second.pid')));
    killAtEnd(current);
    expect(current.pid).not.toBe(leftover.pid);
    expect(isProcessGone(current.pid)).toBe(false);
  }, SPAWN_TIMEOUT_MS);
});
