import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { reapLeftovers } from '../../src/upstream/process/leftover-reaper.js';
import { childRecordsDir, describeChild, ownIdentity, writeChildRecords, type ChildRecord, type OwnerRecord } from '../../src/store/child-records.js';
import { fixturePath } from '../helpers/fixtures.js';
import { isProcessGone, killAtTestEnd, readPidFile, tempDir, waitForFile } from '../helpers/process.js';

/*
 * What a daemon finds at start in its state directory's child records (SPEC §6 "No orphans,
 * ever"), against real processes: the leftovers of a dead daemon are killed, group and setsid
 * helpers included; a pid now used by another process, or the children of a daemon that still
 * runs, are left alone.
 */

const LINUX = process.platform === 'linux';

/** A process that is none of the daemon's business; killed when the test ends. */
async function stranger(): Promise<number> {
  const child = spawn('sleep', ['1000'], { stdio: 'ignore' });
  onTestFinished(() => void child.kill('SIGKILL'));
  await once(child, 'spawn');
  return child.pid as number;
}

/** The echo fixture started as the daemon would (its own group), with a setsid helper, ignoring EOF. */
async function leftoverServer(dir: string): Promise<{ pid: number; setsidPid: number }> {
  const pidFile = join(dir, `server-${Date.now()}.pid`);
  const child = spawn(process.execPath, [fixturePath('echo-stdio')], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
    env: { PATH: process.env.PATH ?? '', PID_FILE: pidFile, SPAWN_SETSID_GRANDCHILD: '1', IGNORE_STDIN_EOF: '1' },
  });
  await waitForFile(pidFile);
  const { pid, setsidPid } = await readPidFile(pidFile);
  killAtTestEnd(pid, setsidPid);
  // Like a daemon that was SIGKILLed: stdin closes, the server does not care.
  child.stdin?.end();
  child.unref();
  return { pid, setsidPid: setsidPid as number };
}

function record(pid: number): ChildRecord {
  const described = describeChild(pid);
  if (!described) throw new Error(`process ${pid} is gone already`);
  return described;
}

/** An owner that no longer runs: this process's pid with another start time, as after a reuse. */
function deadOwner(): OwnerRecord {
  const self = ownIdentity() as OwnerRecord;
  return { ...self, startTime: self.startTime + 1 };
}

function writeRecords(stateDir: string, owner: OwnerRecord, children: ChildRecord[], name = 'dead-daemon'): string {
  const path = join(childRecordsDir(stateDir), `${name}.json`);
  writeChildRecords(path, { version: 1, owner, children });
  return path;
}

function logCapture() {
  const lines: Array<{ level: 'info' | 'warn'; obj: unknown; msg: string }> = [];
  return {
    lines,
    logger: {
      info: (obj: unknown, msg: string) => void lines.push({ level: 'info', obj, msg }),
      warn: (obj: unknown, msg: string) => void lines.push({ level: 'warn', obj, msg }),
    } as never,
  };
}

describe.skipIf(!LINUX)('reaping what a killed daemon left behind', () => {
  it("kills a dead daemon's leftover server and its setsid helper, then removes the record", async () => {
    const stateDir = await tempDir();
    const server = await leftoverServer(stateDir);
    const path = writeRecords(stateDir, deadOwner(), [record(server.pid)]);
    const { lines, logger } = logCapture();

    const report = await reapLeftovers({ stateDir, logger });

    expect(report.reaped).toEqual([expect.objectContaining({ pid: server.pid, pgid: server.pid, command: 'node', others: 1 })]);
    expect(isProcessGone(server.pid)).toBe(true);
    expect(isProcessGone(server.setsidPid)).toBe(true);
    expect(existsSync(path)).toBe(false);
    expect(lines).toContainEqual({ level: 'info', obj: { reaped: report.reaped }, msg: 'reaped leftover server processes' });
  });

  it('never kills a pid the system gave to another process (start time or command line differ)', async () => {
    const stateDir = await tempDir();
    const [byStartTime, byCommand] = [await stranger(), await stranger()];
    writeRecords(stateDir, deadOwner(), [
      { ...record(byStartTime), startTime: record(byStartTime).startTime - 1 },
      { ...record(byCommand), cmdlineHash: 'f'.repeat(64) },
    ]);
    const { lines, logger } = logCapture();

    const report = await reapLeftovers({ stateDir, logger });

    expect(report.reaped).toEqual([]);
    expect(report.skipped).toEqual([
      { pid: byStartTime, owner: process.pid, reason: 'pid reused: the start time differs' },
      { pid: byCommand, owner: process.pid, reason: 'pid reused: the command line differs' },
    ]);
    expect(isProcessGone(byStartTime)).toBe(false);
    expect(isProcessGone(byCommand)).toBe(false);
    expect(lines.filter((line) => line.msg === 'left a recorded process alone')).toHaveLength(2);
  });

  it('leaves the children of a daemon that still runs alone (two daemons, one state directory)', async () => {
    const stateDir = await tempDir();
    const live = await stranger();
    // This very process is the other daemon: alive, with the start time it really has.
    const path = writeRecords(stateDir, ownIdentity() as OwnerRecord, [record(live)], 'live-daemon');

    const report = await reapLeftovers({ stateDir, logger: logCapture().logger });

    expect(report).toEqual({ reaped: [], skipped: [] });
    expect(isProcessGone(live)).toBe(false);
    expect(existsSync(path)).toBe(true);
  });

  it('drops a record file it cannot read, with a warning', async () => {
    const stateDir = await tempDir();
    const path = writeRecords(stateDir, deadOwner(), []);
    writeFileSync(path, '{"version": 1, "owner": ');
    const { lines, logger } = logCapture();

    expect(await reapLeftovers({ stateDir, logger })).toEqual({ reaped: [], skipped: [] });
    expect(existsSync(path)).toBe(false);
    expect(lines).toContainEqual(expect.objectContaining({ level: 'warn', msg: 'unreadable child process record removed' }));
  });
});
