import { accessSync, chmodSync, closeSync, constants, existsSync, mkdirSync, openSync, readSync, renameSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * File-system steps around the SQLite file: creating its directory, probing whether it can be
 * written, and moving a corrupt file aside together with its `-wal` / `-shm` companions.
 */

/** SQLite's companion files; a database is only whole together with them. */
const COMPANION_SUFFIXES = ['-wal', '-shm'] as const;

/** The first 16 bytes of every SQLite 3 database file. */
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * Creates `dir` and any missing parents. Not `mkdirSync(dir, { recursive: true })`: on Node 20
 * that loops forever when a parent exists but refuses new entries (`/proc/self/x/y` answers
 * ENOENT for the child and EEXIST for the parent), which would hang the daemon at start.
 */
export function ensureDirectory(dir: string): void {
  const missing: string[] = [];
  let current = dir;
  while (!existsSync(current)) {
    missing.push(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  // Only the daemon's user reads what goes in there (the database holds OAuth tokens).
  for (const path of missing.reverse()) mkdirSync(path, { mode: 0o700 });
}

/**
 * Makes the database readable and writable by this user only (0600): it holds OAuth tokens and
 * client secrets (issue #16). A missing file is created that way, so SQLite never creates it
 * wider; SQLite gives `-wal` / `-shm` the main file's mode, and ones left by an older run are
 * narrowed here too. Returns the error when a file could not be narrowed (not ours, say).
 */
export function keepPrivate(path: string): NodeJS.ErrnoException | undefined {
  try {
    closeSync(openSync(path, 'a', 0o600));
    for (const file of [path, ...COMPANION_SUFFIXES.map((suffix) => path + suffix)]) {
      if (existsSync(file)) chmodSync(file, 0o600);
    }
    return undefined;
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
}

/**
 * Whether this process may write `path`. `access(2)` asks the kernel, so it sees what SQLite
 * would see: mode bits for ordinary users, `EPERM` for immutable files and `EROFS` for
 * read-only mounts even for root.
 */
export function writeError(path: string): NodeJS.ErrnoException | undefined {
  try {
    accessSync(path, constants.W_OK);
    return undefined;
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
}

/**
 * Renames `file` (and its `-wal` / `-shm`) to `<file>.corrupt-<timestamp>[-wal|-shm]`, keeping
 * SQLite's naming so the set can still be opened together for a post-mortem. Returns the new
 * path of the main file.
 */
export function moveAside(file: string, at: Date): string {
  const aside = `${file}.corrupt-${at.toISOString().replace(/[:.]/g, '-')}`;
  renameSync(file, aside);
  for (const suffix of COMPANION_SUFFIXES) {
    if (existsSync(file + suffix)) renameSync(file + suffix, aside + suffix);
  }
  return aside;
}

/**
 * True when `path` holds bytes that are not an SQLite database. Checked before SQLite opens the
 * file because SQLite, failing on such a file, deletes the `-wal` / `-shm` beside it on close,
 * and those are part of what a post-mortem wants. An empty file is a valid new database; a file
 * we can't read is not ours to judge (the open reports it).
 */
export function hasForeignContent(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false;
  }
  try {
    const head = Buffer.alloc(SQLITE_MAGIC.length);
    const read = readSync(fd, head, 0, head.length, 0);
    return read > 0 && !head.subarray(0, read).equals(SQLITE_MAGIC);
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}
