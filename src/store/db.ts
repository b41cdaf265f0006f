import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Logger } from 'pino';
import { errorMessage } from '../errors.js';
import { ensureDirectory, hasForeignContent, keepPrivate, moveAside, writeError } from './db-files.js';
import { applyMigrations, migrationState, SchemaTooNewError } from './migrations.js';

/** What the store modules log through; a pino logger (or a child) fits. */
export type StoreLogger = Pick<Logger, 'warn' | 'debug'>;

export interface OpenDatabaseOptions {
  /** Detail (errors, paths moved aside) goes here at debug; warnings are returned instead. */
  logger?: StoreLogger;
  /** Open without ever writing: no migrations, no recovery, no WAL switch. @default false */
  readOnly?: boolean;
  /** How long a statement waits for another process's lock. @default 5000 */
  busyTimeoutMs?: number;
}

export interface OpenedDatabase {
  /** The connection; `undefined` when none could be opened and caching is disabled. */
  readonly db: Database.Database | undefined;
  /** True when writes won't persist: the file is read-only, or there is no database at all. */
  readonly readOnly: boolean;
  /** What went wrong and what was done about it, for the log and `/status`. */
  readonly warnings: string[];
  /** Closes the connection. Idempotent. */
  close(): void;
}

/** Errors that say the file's content is bad, so it is ours to move aside and recreate. */
const CORRUPT_CODES = /^SQLITE_(NOTADB|CORRUPT)/;
/** Errors that say we may not write, so we fall back to reading. */
const READ_ONLY_CODES = /^(SQLITE_(READONLY|PERM|AUTH|CANTOPEN)|EACCES|EPERM|EROFS)/;

class CorruptDatabaseError extends Error {
  constructor(
    message: string,
    readonly code: 'SQLITE_NOTADB' | 'SQLITE_CORRUPT',
  ) {
    super(message);
  }
}

/**
 * Opens (creating if needed) the tool-cache database: WAL, busy timeout, integrity check,
 * migrations. It never throws. A corrupt file is moved aside and recreated; a file that can't
 * be written is opened read-only (cached tools still load, new lists aren't saved); when even
 * that fails, `db` is `undefined` and the caller runs without a cache. Every such step adds a
 * warning.
 */
export function openDatabase(path: string, options: OpenDatabaseOptions = {}): OpenedDatabase {
  const warnings: string[] = [];
  const log = options.logger;
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;

  const disabled = (why: string, err?: unknown): OpenedDatabase => {
    if (err !== undefined) log?.debug({ err, path }, 'tool cache disabled');
    warnings.push(`Tool cache disabled: ${why}`);
    return handle(undefined, true, warnings);
  };

  /** `why` is undefined when the caller asked for read-only: nothing to warn about then. */
  const readOnly = (why?: string): OpenedDatabase => {
    const because = why ?? 'was opened read-only';
    if (!existsSync(path)) return disabled(`${path} ${because} and does not exist yet`);
    try {
      const db = openReadOnly(path, busyTimeoutMs);
      if (why) warnings.push(`Tool cache ${path} ${why}; cached tools are read but not updated`);
      return handle(db, true, warnings);
    } catch (err) {
      return disabled(`${path} ${because} and cannot be read (${errorMessage(err)})`, err);
    }
  };

  if (path === ':memory:') {
    if (options.readOnly) return disabled('an in-memory database cannot be read-only');
    try {
      return handle(openReadWrite(path, busyTimeoutMs).db, false, warnings);
    } catch (err) {
      return disabled(`cannot open an in-memory database (${errorMessage(err)})`, err);
    }
  }
  if (options.readOnly) return readOnly();

  try {
    ensureDirectory(dirname(path));
  } catch (err) {
    return disabled(`cannot create the directory of ${path} (${errorMessage(err)})`, err);
  }
  const denied = writeError(dirname(path)) ?? (existsSync(path) ? writeError(path) : undefined);
  if (denied) return readOnly(`is not writable (${denied.code ?? denied.message})`);

  const opened = ({ db, journalMode }: ReadWrite): OpenedDatabase => {
    // SQLite keeps the old mode, silently, where WAL can't work (no shared memory, some network
    // file systems). Still usable, but readers then wait for writers.
    if (journalMode !== 'wal') warnings.push(`Tool cache ${path} is not in WAL mode (journal_mode=${journalMode})`);
    return handle(db, false, warnings);
  };

  const exposed = keepPrivate(path);
  if (exposed) warnings.push(`Tool cache ${path} could not be made private to this user (${exposed.code ?? exposed.message}); it holds OAuth tokens`);

  try {
    if (hasForeignContent(path)) throw new CorruptDatabaseError('file is not a database', 'SQLITE_NOTADB');
    return opened(openReadWrite(path, busyTimeoutMs));
  } catch (err) {
    if (err instanceof SchemaTooNewError) return disabled(`${path}: ${err.message}`, err);
    const code = errorCode(err);
    if (READ_ONLY_CODES.test(code)) return readOnly(`is not writable (${code})`);
    if (!CORRUPT_CODES.test(code)) return disabled(`cannot open ${path} (${errorMessage(err)})`, err);

    let aside: string;
    try {
      aside = moveAside(path, new Date());
    } catch (moveErr) {
      return disabled(`${path} is corrupt and cannot be moved aside (${errorMessage(moveErr)})`, moveErr);
    }
    log?.debug({ err, path, aside }, 'moved a corrupt tool cache aside');
    keepPrivate(path);
    try {
      const fresh = openReadWrite(path, busyTimeoutMs);
      warnings.push(`Tool cache ${path} was corrupt (${errorMessage(err)}); moved it to ${aside} and started empty`);
      return opened(fresh);
    } catch (retryErr) {
      return disabled(`${path} was corrupt and could not be recreated (${errorMessage(retryErr)})`, retryErr);
    }
  }
}

interface ReadWrite {
  db: Database.Database;
  /** What SQLite settled on; `memory` for `:memory:`. */
  journalMode: string;
}

function openReadWrite(path: string, busyTimeoutMs: number): ReadWrite {
  const db = new Database(path, { timeout: busyTimeoutMs });
  try {
    // Checked before anything writes: on a damaged file a write could make things worse.
    checkIntegrity(db);
    const journalMode = String(db.pragma('journal_mode = WAL', { simple: true }));
    // NORMAL is durable enough in WAL mode for a cache we can always rebuild from the servers.
    db.pragma('synchronous = NORMAL');
    applyMigrations(db);
    return { db, journalMode };
  } catch (err) {
    db.close();
    throw err;
  }
}

function openReadOnly(path: string, busyTimeoutMs: number): Database.Database {
  const db = new Database(path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
  try {
    checkIntegrity(db);
    const state = migrationState(db);
    if (state.unknown.length > 0) throw new SchemaTooNewError(state.unknown);
    // Nothing can be migrated without writing, so an out-of-date file is as good as absent.
    if (state.pending.length > 0) throw new Error('its schema is out of date');
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * `quick_check` reads every page, so it also catches damage past the header that opening alone
 * would only hit later, in the middle of a get. The cache is small; this costs milliseconds.
 */
function checkIntegrity(db: Database.Database): void {
  const rows = db.pragma('quick_check') as Array<{ quick_check: string }>;
  const problems = rows.map((row) => row.quick_check).filter((result) => result !== 'ok');
  if (problems.length > 0) {
    throw new CorruptDatabaseError(`quick_check failed: ${problems.slice(0, 3).join('; ')}`, 'SQLITE_CORRUPT');
  }
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

function handle(db: Database.Database | undefined, readOnly: boolean, warnings: string[]): OpenedDatabase {
  return {
    db,
    readOnly,
    warnings,
    close() {
      if (db?.open) db.close();
    },
  };
}
