import { readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { errorMessage } from '../errors.js';
import { hashCmdline, PROC_AVAILABLE, readSpawned, readStat } from '../util/process-tree.js';
import { ensureDirectory } from './db-files.js';

/**
 * The stdio children a daemon process has running, kept in the state directory so that the next
 * start can kill what a daemon killed with SIGKILL left behind (SPEC §6 "No orphans, ever").
 *
 * One small JSON file per daemon process, `<state dir>/children/<pid>-<start time>.json`,
 * rewritten (write to a temporary file, then rename: a reader never sees half a file, even if we
 * are killed mid-write) whenever a child starts or is gone. A file, not rows in the SQLite store: it must
 * work when the database is read-only, disabled or in use by another daemon, and it must not
 * depend on a transaction committing before a SIGKILL. Nor is it one of the store ports
 * (ports.ts) a shared, networked backend could take over: the pids name processes of this
 * machine, so the file stays local whatever holds the rest of the daemon's state.
 *
 * Nothing secret is written: a command line can hold resolved `${VAR}` values, so only its hash
 * (to recognise the process) and the program's base name (for the log) are kept.
 */

export const CHILD_RECORDS_DIR = 'children';

/** Who wrote a file: enough to tell whether that process still runs. */
export interface OwnerRecord {
  pid: number;
  /** /proc/<pid>/stat field 22: with the pid, names one process for the life of the system. */
  startTime: number;
  /** A different boot means every process the file names is long gone. */
  bootId?: string;
  /** Pids of another pid namespace (a container sharing the directory) mean nothing here. */
  pidNamespace?: string;
}

export interface ChildRecord {
  pid: number;
  pgid: number;
  startTime: number;
  /** SHA-256 of the NUL-joined command line, as /proc/<pid>/cmdline showed it at spawn. */
  cmdlineHash: string;
  /** The program's base name, for the log. */
  command: string;
}

const OwnerSchema = z.object({
  pid: z.number().int().positive(),
  startTime: z.number().int().nonnegative(),
  bootId: z.string().optional(),
  pidNamespace: z.string().optional(),
});

const ChildSchema = z.object({
  pid: z.number().int().positive(),
  pgid: z.number().int().positive(),
  startTime: z.number().int().nonnegative(),
  cmdlineHash: z.string(),
  command: z.string(),
});

const FileSchema = z.object({ version: z.literal(1), owner: OwnerSchema, children: z.array(ChildSchema) });

export type ChildRecordsFile = z.infer<typeof FileSchema>;

export function childRecordsDir(stateDir: string): string {
  return join(stateDir, CHILD_RECORDS_DIR);
}

function readTrimmed(path: string, read: (path: string) => string): string | undefined {
  try {
    return read(path).trim();
  } catch {
    return undefined;
  }
}

/** This process as an owner; undefined where there is no /proc to identify it by. */
export function ownIdentity(): OwnerRecord | undefined {
  const stat = readStat(process.pid);
  if (!stat) return undefined;
  const bootId = readTrimmed('/proc/sys/kernel/random/boot_id', (path) => readFileSync(path, 'utf8'));
  const pidNamespace = readTrimmed('/proc/self/ns/pid', readlinkSync);
  return { pid: process.pid, startTime: stat.startTime, ...(bootId ? { bootId } : {}), ...(pidNamespace ? { pidNamespace } : {}) };
}

/**
 * Describes a child that just spawned; undefined if it is already gone (or there is no /proc). One
 * still inside execve is waited for (readSpawned): left unrecorded, it would go unwatched, an
 * orphan were the daemon then killed.
 */
export function describeChild(pid: number): ChildRecord | undefined {
  if (!PROC_AVAILABLE) return undefined;
  const spawned = readSpawned(pid);
  if (!spawned) return undefined;
  const { stat, cmdline } = spawned;
  return { pid, pgid: stat.pgid, startTime: stat.startTime, cmdlineHash: hashCmdline(cmdline), command: basename(cmdline[0] ?? '') };
}

/** Replaces the file atomically; throws what the file system says (the caller logs it). */
export function writeChildRecords(path: string, content: ChildRecordsFile): void {
  ensureDirectory(join(path, '..'));
  const temporary = `${path}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(content)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}

/** Removes a file and the temporary file a write killed half-way may have left. */
export function removeChildRecords(path: string): void {
  rmSync(path, { force: true });
  rmSync(`${path}.tmp`, { force: true });
}

export type RecordFileEntry = { path: string; file: ChildRecordsFile } | { path: string; error: string };

/** Every record file of `stateDir` (none if the directory does not exist), each validated. */
export function readChildRecords(stateDir: string): RecordFileEntry[] {
  const dir = childRecordsDir(stateDir);
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.json'));
  } catch {
    return [];
  }
  return names.map((name): RecordFileEntry => {
    const path = join(dir, name);
    try {
      return { path, file: FileSchema.parse(JSON.parse(readFileSync(path, 'utf8'))) };
    } catch (err) {
      return { path, error: errorMessage(err) };
    }
  });
}
