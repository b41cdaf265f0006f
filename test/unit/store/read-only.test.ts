import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, type TestContext } from 'vitest';
import { openToolCache } from '../../../src/store/open-tool-cache.js';
import { HASH, TOOLS } from './cache-fixtures.js';
import { bundleReadOnlyScenario } from './read-only-child.js';
import { runReadOnlyScenario, type ReadOnlyOutcome } from './read-only-scenario.js';
import { tempDir } from './store-helpers.js';

/*
 * The tests run as root, and root ignores mode bits (CAP_DAC_OVERRIDE): after `chmod 0444` root
 * still writes the file, so a chmod-only test would pass without exercising anything. Two real
 * refusals are used instead:
 *   1. chmod as usual, but run the scenario in a child process started as `nobody` (uid 65534),
 *      where the kernel enforces the mode bits exactly as it does for a non-root daemon. When the
 *      suite itself runs unprivileged, the same scenario runs in-process. The child is a bundle
 *      in the test's own temp directory (see read-only-child.ts): `nobody` may not be able to
 *      read the checkout at all.
 *   2. `chattr +i` (immutable), which the kernel refuses to every writer, root included (EPERM).
 * (`/proc/self/...` — a directory that can't be created even by root — is covered in db.test.ts.)
 */

const execFileAsync = promisify(execFile);
const NOBODY = 65534;

/** A seeded cache file at `<tmp>/state/cache.db`, in a tree an unprivileged user may enter. */
async function seededCache(): Promise<{ dir: string; path: string }> {
  const root = tempDir();
  chmodSync(root, 0o755);
  const dir = join(root, 'state');
  mkdirSync(dir);
  const path = join(dir, 'cache.db');
  const { store, warnings } = openToolCache(path);
  expect(warnings).toEqual([]);
  await store.put('echo', HASH, TOOLS);
  await store.close();
  return { dir, path };
}

/** Does `chmod 0444` stop this process from writing? Not for root. */
function modeBitsStopUs(dir: string): boolean {
  const probe = join(dir, 'mode-probe');
  writeFileSync(probe, '');
  chmodSync(probe, 0o444);
  try {
    closeSync(openSync(probe, 'r+'));
    return false;
  } catch {
    return true;
  } finally {
    rmSync(probe, { force: true });
  }
}

/** Runs the scenario where mode bits apply: here if they stop us, else as `nobody`. */
async function runWithModeBits(t: TestContext, dir: string, path: string): Promise<ReadOnlyOutcome> {
  if (modeBitsStopUs(dir)) return runReadOnlyScenario(path);
  if (process.getuid?.() !== 0) t.skip('mode bits do not stop this user and it cannot switch users');
  // The temp root (0755) above the cache's directory; the bundle goes there, outside `dir`,
  // whose mode is what the test is about.
  const root = dirname(dir);
  const scenario = await bundleReadOnlyScenario(root);
  try {
    const { stdout } = await execFileAsync(process.execPath, [scenario, path], {
      cwd: root,
      uid: NOBODY,
      gid: NOBODY,
      env: { PATH: process.env.PATH ?? '', HOME: dir },
      timeout: 20_000,
    });
    return JSON.parse(stdout) as ReadOnlyOutcome;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EPERM' || code === 'EINVAL') t.skip(`cannot start a process as uid ${NOBODY} (${code})`);
    throw err;
  }
}

describe('a cache file the daemon may not write (mode bits)', () => {
  it('file 0444 in a 0555 directory: no cache, a warning, and writes never throw', async (t) => {
    const { dir, path } = await seededCache();
    chmodSync(path, 0o444);
    chmodSync(dir, 0o555);
    try {
      const outcome = await runWithModeBits(t, dir, path);
      expect(outcome.uid, 'mode bits mean nothing to root').not.toBe(0);
      // A WAL database can't even be read without creating its -shm beside it, which the
      // directory forbids; so this degrades all the way to no cache.
      expect(outcome).toEqual({
        uid: expect.any(Number),
        warnings: [expect.stringMatching(/^Tool cache disabled: .*cache\.db is not writable \(EACCES\) and cannot be read/)],
        store: 'noop',
        before: null,
        after: null,
        putThrew: null,
        fileUnchanged: true,
      });
    } finally {
      chmodSync(dir, 0o755);
    }
  });

  it('file 0444 in a writable directory: cached tools still load, nothing is written', async (t) => {
    const { dir, path } = await seededCache();
    chmodSync(path, 0o444);
    chmodSync(dir, 0o777);
    const outcome = await runWithModeBits(t, dir, path);
    expect(outcome.uid, 'mode bits mean nothing to root').not.toBe(0);
    expect(outcome).toEqual({
      uid: expect.any(Number),
      warnings: [expect.stringMatching(/cache\.db is not writable \(EACCES\); cached tools are read but not updated$/)],
      store: 'sqlite',
      before: ['echo', 'add'],
      after: ['echo', 'add'],
      putThrew: null,
      fileUnchanged: true,
    });
  });
});

describe('an immutable cache file (chattr +i), refused even to root', () => {
  /** Sets or clears the immutable flag; skips the test where the file system or caps don't allow it. */
  function chattr(t: TestContext, flag: '+i' | '-i', ...paths: string[]): void {
    try {
      execFileSync('chattr', [flag, ...paths], { stdio: 'pipe' });
    } catch (err) {
      if (flag === '+i') t.skip(`chattr +i is not available here (${String(err).split('\n')[0]})`);
      throw err;
    }
  }

  it('immutable file: cached tools still load, writes are skipped without throwing', async (t) => {
    const { path } = await seededCache();
    chattr(t, '+i', path);
    try {
      expect(await runReadOnlyScenario(path)).toEqual({
        uid: expect.any(Number),
        warnings: [expect.stringMatching(/cache\.db is not writable \(EPERM\); cached tools are read but not updated$/)],
        store: 'sqlite',
        before: ['echo', 'add'],
        after: ['echo', 'add'],
        putThrew: null,
        fileUnchanged: true,
      });
    } finally {
      chattr(t, '-i', path);
    }
  });

  it('immutable file and directory: no cache, a warning, and writes never throw', async (t) => {
    const { dir, path } = await seededCache();
    chattr(t, '+i', path);
    try {
      chattr(t, '+i', dir);
      try {
        expect(await runReadOnlyScenario(path)).toEqual({
          uid: expect.any(Number),
          warnings: [expect.stringMatching(/^Tool cache disabled: .*is not writable \(EPERM\) and cannot be read/)],
          store: 'noop',
          before: null,
          after: null,
          putThrew: null,
          fileUnchanged: true,
        });
      } finally {
        chattr(t, '-i', dir);
      }
    } finally {
      chattr(t, '-i', path);
    }
  });
});
