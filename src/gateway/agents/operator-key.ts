import { lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { defaultDbPath } from '../../config/state-path.js';
import { mintOperatorKey } from './agent-keys.js';

/**
 * The operator key of a daemon that has agents but no `token` (issue #22). Once an agent exists,
 * every request needs a key, so the local operator needs one too: the daemon writes a random key
 * into `operator.key` beside its database (0600, like the database), and the CLI on the same
 * machine reads it from there. A configured `token` makes the file unnecessary and is never
 * written anywhere.
 */
export const OPERATOR_KEY_FILE = 'operator.key';

/** Where the operator key of the daemon with this database lives; none for an in-memory database. */
export function operatorKeyPath(dbPath: string | undefined): string | undefined {
  return dbPath === undefined || dbPath === ':memory:' ? undefined : join(dirname(dbPath), OPERATOR_KEY_FILE);
}

/** The key in `path`, or a new one written there (only if none exists: two daemons agree on one). */
export function loadOrCreateOperatorKey(path: string): string {
  const existing = readKey(path);
  if (existing !== undefined) return existing;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const key = mintOperatorKey();
  try {
    writeFileSync(path, `${key}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    // Another daemon on the same database wrote it first: use theirs.
    const raced = (err as NodeJS.ErrnoException).code === 'EEXIST' ? readKey(path) : undefined;
    if (raced !== undefined) return raced;
    throw err;
  }
}

/**
 * Writes a cluster's operator key (issue #43 item 4: it lives in the shared store) to `path`, for
 * the CLI on this machine, unless the file already holds it; written whole or not at all (a
 * temporary file renamed over it). A failure is logged: the key works all the same.
 */
export function keepOperatorKey(path: string, key: string, logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void }): void {
  if (readKey(path) === key) return;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${key}\n`, { mode: 0o600 });
    renameSync(temporary, path);
    logger.info({ path }, "agents need keys now: the cluster's operator key (in the shared store) is also in this file for the CLI on this machine");
  } catch (err) {
    logger.warn({ path, err: err instanceof Error ? err.message : String(err) }, "could not write the cluster's operator key for the CLI on this machine");
  }
}

/** Whether a daemon on this database wrote an operator key (so it has had agents). */
export function operatorKeyExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The operator key a local CLI uses when given no token: the one beside the default database
 * (`$XDG_STATE_HOME/switchboard/`, else `~/.local/state/switchboard/`), if a daemon wrote one.
 */
export function localOperatorKey(env: NodeJS.ProcessEnv, home: string = env.HOME || homedir()): string | undefined {
  const path = operatorKeyPath(defaultDbPath(home, env));
  return path === undefined ? undefined : readKey(path);
}

/**
 * The key in `path` — only from a regular file of this user that nobody else may read or write
 * (0600): a key file another local user could have planted or read is not trusted.
 */
function readKey(path: string): string | undefined {
  try {
    const stat = lstatSync(path);
    if (!stat.isFile() || (stat.mode & 0o077) !== 0 || (typeof process.getuid === 'function' && stat.uid !== process.getuid())) return undefined;
    const key = readFileSync(path, 'utf8').trim();
    return key === '' ? undefined : key;
  } catch {
    return undefined;
  }
}
