import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onTestFinished } from 'vitest';

export interface TempTree {
  root: string;
  /** Stands in for the user's home directory. */
  home: string;
  /** The project directory (working directory of discovery). */
  cwd: string;
  /** Writes a file under `root`; objects are written as JSON. */
  write(relative: string, content: string | object): Promise<string>;
}

/**
 * A fresh `home/` + `proj/` pair under the OS temp dir, removed when the current test ends.
 * Must be called inside a test (it registers the cleanup with `onTestFinished`).
 */
export async function makeTree(files: Record<string, string | object> = {}): Promise<TempTree> {
  // realpath: on macOS the temp dir is behind a symlink, and discovery reports resolved paths.
  const root = await realpath(await mkdtemp(join(tmpdir(), 'switchboard-config-')));
  onTestFinished(() => rm(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  const cwd = join(root, 'proj');
  await mkdir(home, { recursive: true });
  await mkdir(cwd, { recursive: true });
  const write = async (relative: string, content: string | object): Promise<string> => {
    const path = join(root, relative);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
    return path;
  };
  for (const [relative, content] of Object.entries(files)) await write(relative, content);
  return { root, home, cwd, write };
}
