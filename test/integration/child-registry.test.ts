import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { forgetChild, keepChildRecords, recordChild } from '../../src/upstream/process/child-registry.js';
import { reapLeftovers } from '../../src/upstream/process/leftover-reaper.js';
import { childRecordsDir, ownIdentity, writeChildRecords, type ChildRecordsFile, type OwnerRecord } from '../../src/store/child-records.js';
import { tempDir } from '../helpers/process.js';

/** The record file a daemon of this process keeps in `stateDir` (SPEC §6 "No orphans, ever"). */

const LINUX = process.platform === 'linux';
const silent = { warn: () => {}, info: () => {} };

/** A distinctive argument, to show that command lines are not written down. */
const SECRET_ARG = '999999.987654';

async function sleeper(): Promise<number> {
  const child = spawn('sleep', [SECRET_ARG], { stdio: 'ignore' });
  onTestFinished(() => void child.kill('SIGKILL'));
  await once(child, 'spawn');
  return child.pid as number;
}

describe.skipIf(!LINUX)('child records', () => {
  it('lists each child from spawn until it is gone, in <pid>-<start time>.json, removed when released', async () => {
    const stateDir = await tempDir();
    const self = ownIdentity() as OwnerRecord;
    const path = join(childRecordsDir(stateDir), `${self.pid}-${self.startTime}.json`);
    const release = keepChildRecords(stateDir, silent);
    onTestFinished(release);
    const read = () => JSON.parse(readFileSync(path, 'utf8')) as ChildRecordsFile;
    expect(read()).toEqual({ version: 1, owner: self, children: [] });

    const pid = await sleeper();
    recordChild(pid);
    expect(read().children).toEqual([{ pid, pgid: expect.any(Number), startTime: expect.any(Number), cmdlineHash: expect.stringMatching(/^[0-9a-f]{64}$/), command: 'sleep' }]);
    // The command line itself may hold secrets: only its hash is kept.
    expect(readFileSync(path, 'utf8')).not.toContain(SECRET_ARG);

    forgetChild(pid);
    expect(read().children).toEqual([]);
    release();
    expect(existsSync(path)).toBe(false);
  });

  it("a start that holds the pid of a dead daemon reaps that daemon's file, not its own", async () => {
    const stateDir = await tempDir();
    const self = ownIdentity() as OwnerRecord;
    const theirs = join(childRecordsDir(stateDir), `${self.pid}-${self.startTime - 1}.json`);
    writeChildRecords(theirs, { version: 1, owner: { ...self, startTime: self.startTime - 1 }, children: [] });
    const release = keepChildRecords(stateDir, silent);
    onTestFinished(release);

    await reapLeftovers({ stateDir, logger: silent });

    expect(existsSync(theirs)).toBe(false);
    expect(existsSync(join(childRecordsDir(stateDir), `${self.pid}-${self.startTime}.json`))).toBe(true);
  });
});
