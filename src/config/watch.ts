import { statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

export interface ConfigWatcherOptions {
  /** Called once per quiet period with the config files that changed (absolute paths). */
  onChange(files: string[]): void;
  /** Quiet period after the last change. @default 300 */
  debounceMs?: number;
  /** A file written without pause is still applied this often. @default 3 × debounceMs */
  maxWaitMs?: number;
  logger?: { debug(obj: object, msg: string): void };
}

interface DirWatch {
  watcher: FSWatcher;
  /** The directory's inode: a directory deleted and made again is a new one to watch. */
  ino: number;
  /** Entry name in this directory → the config files it leads to (the file itself, or a directory on the way). */
  names: Map<string, Set<string>>;
}

export const DEFAULT_WATCH_DEBOUNCE_MS = 300;

/**
 * Watches config files that may or may not exist. Each file is watched through the nearest
 * directory on its path that exists, non-recursively: the file's own directory once it is
 * there (which also catches editors that save by renaming a temp file over it), else the
 * ancestor where the missing directory would appear. Events for other entries of that
 * directory (the home directory is busy) are ignored by name. After each quiet period the
 * directories are re-armed, because a directory may have appeared or gone, and then `onChange`
 * runs. Watchers do not keep the process alive.
 */
export class ConfigWatcher {
  private readonly debounceMs: number;
  private readonly maxWaitMs: number;
  private files: readonly string[] = [];
  private dirs = new Map<string, DirWatch>();
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private firstPendingAt = 0;
  private closed = false;

  constructor(private readonly options: ConfigWatcherOptions) {
    this.debounceMs = options.debounceMs ?? DEFAULT_WATCH_DEBOUNCE_MS;
    this.maxWaitMs = options.maxWaitMs ?? this.debounceMs * 3;
  }

  /** Sets the files to watch (replacing the previous set) and arms the watchers. */
  watch(files: readonly string[]): void {
    if (this.closed) return;
    this.files = [...new Set(files)];
    this.arm();
  }

  /** The directories watched right now (for tests and `/status`-style introspection). */
  watchedDirs(): string[] {
    return [...this.dirs.keys()].sort();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const dir of this.dirs.values()) dir.watcher.close();
    this.dirs.clear();
    this.pending.clear();
  }

  private arm(): void {
    const wanted = new Map<string, { ino: number; names: Map<string, Set<string>> }>();
    for (const file of this.files) {
      const { dir, ino, name } = nearestExisting(file);
      if (dir === undefined) continue;
      let entry = wanted.get(dir);
      if (!entry) wanted.set(dir, (entry = { ino, names: new Map() }));
      const leading = entry.names.get(name) ?? new Set<string>();
      leading.add(file);
      entry.names.set(name, leading);
    }
    const next = new Map<string, DirWatch>();
    // New watchers first, old ones closed after: no moment in which a change goes unseen.
    for (const [dir, { ino, names }] of wanted) {
      const current = this.dirs.get(dir);
      if (current && current.ino === ino) {
        current.names = names;
        next.set(dir, current);
        continue;
      }
      const watcher = this.open(dir);
      if (watcher) next.set(dir, { watcher, ino, names });
    }
    for (const [dir, current] of this.dirs) if (next.get(dir) !== current) current.watcher.close();
    this.dirs = next;
  }

  private open(dir: string): FSWatcher | undefined {
    try {
      const watcher = watch(dir, { persistent: false }, (_event, filename) => this.onEvent(dir, filename));
      // The directory went away (or became unreadable): re-arm from its parent.
      watcher.on('error', () => this.onEvent(dir, null));
      return watcher;
    } catch (err) {
      this.options.logger?.debug({ dir, err: (err as Error).message }, 'cannot watch config directory');
      return undefined;
    }
  }

  private onEvent(dir: string, filename: string | Buffer | null): void {
    const entry = this.dirs.get(dir);
    if (!entry || this.closed) return;
    const name = filename === null ? null : String(filename);
    const gone = inodeOf(dir) !== entry.ino;
    const hit = name === null || gone ? [...entry.names.values()] : [entry.names.get(name)].filter((s) => s !== undefined);
    if (hit.length === 0) return;
    for (const files of hit) for (const file of files) this.pending.add(file);
    this.schedule();
  }

  private schedule(): void {
    const now = Date.now();
    if (this.timer === undefined) this.firstPendingAt = now;
    clearTimeout(this.timer);
    const wait = Math.max(0, Math.min(this.debounceMs, this.firstPendingAt + this.maxWaitMs - now));
    this.timer = setTimeout(() => this.flush(), wait);
    this.timer.unref();
  }

  private flush(): void {
    this.timer = undefined;
    if (this.closed) return;
    const files = [...this.pending].sort();
    this.pending.clear();
    this.arm();
    this.options.logger?.debug({ files }, 'config files changed');
    this.options.onChange(files);
  }
}

function inodeOf(dir: string): number | undefined {
  try {
    return statSync(dir).ino;
  } catch {
    return undefined;
  }
}

/**
 * The nearest existing directory on `file`'s path, its inode, and the entry name in it that
 * leads to `file`. `dir` is undefined only when not even the root can be read.
 */
function nearestExisting(file: string): { dir: string | undefined; ino: number; name: string } {
  let name = basename(file);
  let dir = dirname(file);
  for (;;) {
    try {
      const stat = statSync(dir);
      if (stat.isDirectory()) return { dir, ino: stat.ino, name };
    } catch {
      // missing (or not a directory): try the parent
    }
    const parent = dirname(dir);
    if (parent === dir) return { dir: undefined, ino: 0, name };
    name = basename(dir);
    dir = parent;
  }
}
