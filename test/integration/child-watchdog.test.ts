import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ChildWatchdog, findWatchdogScript } from '../../src/upstream/process/child-watchdog.js';
import { describeChild, type ChildRecord } from '../../src/store/child-records.js';
import { readStat, waitForProcessesExit } from '../../src/util/process-tree.js';
import { FIXTURE_BUILD_DIR } from '../helpers/build-fixtures.js';
import { fixturePath } from '../helpers/fixtures.js';
import { isProcessGone, killAtTestEnd, killRefsAtTestEnd, processRef, readPidFile, tempDir, waitForFile, watchdogOf } from '../helpers/process.js';

/*
 * The child watchdog (src/watchdog.ts, as bundled next to the CLI) against real processes: once
 * its pipe closes it ends the recorded children that are still the ones recorded, and only them
 * — a pid whose start time or command line differs from the record, or a child the daemon said
 * is gone, is left alone — then exits by itself. The daemon's side lets it go with its last child.
 */

const LINUX = process.platform === 'linux';
const WATCHDOG = join(FIXTURE_BUILD_DIR, 'cli', 'watchdog.js');

/** A process in a group of its own, as the daemon spawns a stdio server; killed when the test ends. */
function detached(command: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn(command, args, { detached: true, stdio: 'ignore', env: { ...process.env, ...env } });
  child.unref();
  killAtTestEnd(child.pid);
  return child;
}

/** A ChildWatchdog of this process recording one detached `sleep`, and the watchdog process it started (killed at the end). */
function watchingOneSleeper() {
  const sleeper = detached('sleep', ['1000']);
  const record = recordOf(sleeper);
  const watchdog = new ChildWatchdog(WATCHDOG);
  watchdog.add(record);
  const found = watchdogOf(process.pid);
  expect(found).toBeDefined();
  const running = found!;
  killRefsAtTestEnd(running);
  return { sleeper, record, watchdog, running };
}

function recordOf(child: ChildProcess): ChildRecord {
  const record = describeChild(child.pid as number);
  if (!record) throw new Error(`cannot describe ${child.pid}`);
  return record;
}

describe('findWatchdogScript', () => {
  const layouts: Array<[string, string, string]> = [
    ['the CLI bundle, from a chunk', 'file:///app/dist/chunks/serve-X.js', '/app/dist/watchdog.js'],
    ['the CLI bundle, from the entry', 'file:///app/dist/cli.js', '/app/dist/watchdog.js'],
    ['the compiled library', 'file:///app/dist/mcp/process/child-watchdog.js', '/app/dist/watchdog.js'],
  ];
  it.each(layouts)('finds dist/watchdog.js in %s', (_layout, moduleUrl, expected) => {
    expect(findWatchdogScript(moduleUrl, (path) => path === expected)).toBe(expected);
  });

  it('finds none next to the TypeScript sources', () => {
    expect(findWatchdogScript(new URL('../../src/upstream/process/child-watchdog.ts', import.meta.url).href)).toBeUndefined();
  });
});

describe.skipIf(!LINUX)('the child watchdog', () => {
  it('ends only the recorded children that are still the ones recorded, then exits by itself', async () => {
    const dir = await tempDir();
    const pidFile = join(dir, 'stubborn.pid');
    // Only SIGKILL ends it: the watchdog has to go through its whole grace.
    const stubborn = detached(process.execPath, [fixturePath('never-answers-initialize')], { PID_FILE: pidFile, IGNORE_SIGTERM: '1', IGNORE_STDIN_EOF: '1' });
    const [otherStart, otherCommand, forgotten] = [0, 1, 2].map(() => detached('sleep', ['1000']));
    const records = {
      stubborn: recordOf(stubborn),
      otherStart: { ...recordOf(otherStart!), startTime: 1 },
      otherCommand: { ...recordOf(otherCommand!), cmdlineHash: '0'.repeat(64) },
      forgotten: recordOf(forgotten!),
    };
    await waitForFile(pidFile);
    expect((await readPidFile(pidFile)).pid).toBe(stubborn.pid);
    const stubbornRef = processRef(stubborn.pid as number);

    const watchdog = spawn(process.execPath, [WATCHDOG], { stdio: ['pipe', 'ignore', 'pipe'] });
    onTestFinished(() => void watchdog.kill('SIGKILL'));
    let stderr = '';
    watchdog.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = once(watchdog, 'exit');
    for (const record of Object.values(records)) watchdog.stdin.write(`+${JSON.stringify(record)}\n`);
    watchdog.stdin.write(`-${records.forgotten.pid}\n`);
    watchdog.stdin.end();

    expect(await exited).toEqual([0, null]);
    expect(stderr).toBe('');
    // SIGKILLed as the watchdog exits; a loaded box may take a moment to run the kill.
    expect(await waitForProcessesExit([stubbornRef], 2_000)).toBe(true);
    for (const child of [otherStart, otherCommand, forgotten]) expect(isProcessGone(child!.pid as number)).toBe(false);
  });

  it('is let go by the daemon with its last child, and kills nothing then', async () => {
    const { sleeper, record, watchdog, running } = watchingOneSleeper();

    watchdog.remove(record.pid);
    expect(await waitForProcessesExit([running], 5_000)).toBe(true);
    expect(isProcessGone(sleeper.pid as number)).toBe(false);
    expect(processRef(sleeper.pid as number).startTime).toBe(record.startTime);
  });

  it('is ended by end() at shutdown, gone (and reaped) when end() resolves, even while it is still booting', async () => {
    const { sleeper, record, watchdog, running } = watchingOneSleeper();
    // While a child is recorded, the watchdog is still needed: end() leaves it be.
    await watchdog.end();
    expect(isProcessGone(running.pid)).toBe(false);

    // Let go and ended in the same turn: no time to boot, let alone to read its pipe's end.
    watchdog.remove(record.pid);
    await watchdog.end();
    expect(readStat(running.pid)).toBeUndefined();
    expect(isProcessGone(sleeper.pid as number)).toBe(false);
  });
});
