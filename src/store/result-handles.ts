import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { SwitchboardError } from '../errors.js';
import type { Clock, ClockTimer } from '../util/clock.js';

/** Settings of the kept results (issue #38 item 2). */
export interface ResultHandleSettings {
  /** Results kept in memory up to this many bytes (of their JSON); older ones spill to files. @default 64 MiB */
  memoryBytes?: number;
  /** Spilled results kept up to this many bytes; beyond it the oldest are evicted. @default 1 GiB */
  diskBytes?: number;
  /** How long a result is kept. @default 15 min */
  ttlMs?: number;
  /** The folder spilled results are written to (mode 0600), beside the store; none: evicted instead of spilled. */
  dir?: string;
}

export const DEFAULT_RESULT_TTL_MS = 15 * 60_000;

interface Entry {
  owner: string;
  bytes: number;
  expiresAt: number;
  /** In memory until spilled (and while its file is written). */
  result: Record<string, unknown> | undefined;
  file: string | undefined;
  spilling: Promise<void> | undefined;
}

/** Why a handle is gone, remembered for a while so the answer can say when. */
interface Gone {
  owner: string;
  at: number;
  why: 'expired' | 'evicted';
}

const GONE_REMEMBERED = 10_000;

/**
 * The whole results behind cut ones (SPEC §19): kept in memory up to a byte bound, then spilled
 * oldest first to files (mode 0600) in a folder of this process beside the store, evicted oldest
 * first past the disk bound, removed at their TTL on the injected clock. Only the owner (the
 * calling agent's name; '' for the operator) may read one; the operator reads any.
 */
export class ResultHandles {
  readonly #entries = new Map<string, Entry>();
  readonly #gone = new Map<string, Gone>();
  readonly #clock: Clock;
  readonly #log: Logger | undefined;
  readonly #memoryBound: number;
  readonly #diskBound: number;
  readonly ttlMs: number;
  readonly #dir: string | undefined;
  #memoryBytes = 0;
  #diskBytes = 0;
  #timer: ClockTimer | undefined;
  #dirMade = false;
  #closing: Promise<void> | undefined;
  /** How many results each owner has kept; an owner's first and last one are told to the listeners. */
  readonly #owners = new Map<string, number>();
  readonly #ownerListeners = new Set<(owner: string) => void>();
  /** File writes and removals under way. */
  readonly #io = new Set<Promise<unknown>>();

  constructor(settings: ResultHandleSettings, clock: Clock, log?: Logger) {
    this.#clock = clock;
    this.#log = log;
    this.#memoryBound = settings.memoryBytes ?? 64 * 1024 * 1024;
    this.#diskBound = settings.diskBytes ?? 1024 * 1024 * 1024;
    this.ttlMs = settings.ttlMs ?? DEFAULT_RESULT_TTL_MS;
    this.#dir = settings.dir === undefined ? undefined : join(settings.dir, `${process.pid}-${randomBytes(4).toString('hex')}`);
  }

  /** This process's spill folder (created at the first spill); undefined when results are never spilled. */
  get spillDir(): string | undefined {
    return this.#dir;
  }

  /** Bytes held in memory and on disk, and how many results each holds. */
  stats(): { memoryBytes: number; diskBytes: number; inMemory: number; onDisk: number } {
    let inMemory = 0;
    for (const entry of this.#entries.values()) if (entry.file === undefined) inMemory += 1;
    return { memoryBytes: this.#memoryBytes, diskBytes: this.#diskBytes, inMemory, onDisk: this.#entries.size - inMemory };
  }

  /** Whether `owner` has a result kept now (`read_result` is listed to it then). */
  hasFor(owner: string): boolean {
    return this.#owners.has(owner);
  }

  /** Calls `listener` with an owner when it comes to have a kept result, and when its last one goes. Returns the unsubscribe. */
  onOwnerChange(listener: (owner: string) => void): () => void {
    this.#ownerListeners.add(listener);
    return () => void this.#ownerListeners.delete(listener);
  }

  #counted(owner: string, by: 1 | -1): void {
    const count = (this.#owners.get(owner) ?? 0) + by;
    if (count > 0) this.#owners.set(owner, count);
    else this.#owners.delete(owner);
    if (count === 0 || (by === 1 && count === 1)) for (const listener of this.#ownerListeners) listener(owner);
  }

  /** Keeps `result` for `owner`; `bytes` is the size of its JSON. Returns the handle. */
  put(owner: string, result: Record<string, unknown>, bytes: number): string {
    const handle = `res_${randomBytes(12).toString('base64url')}`;
    const now = this.#clock.now();
    this.#entries.set(handle, { owner, bytes, expiresAt: now + this.ttlMs, result, file: undefined, spilling: undefined });
    this.#memoryBytes += bytes;
    this.#counted(owner, 1);
    this.#spillOverBound();
    this.#schedule();
    return handle;
  }

  /**
   * The whole result of `handle` for `reader` (a name; undefined: the operator, who reads any).
   * Another owner's handle answers as an unknown one (`RESULT_NOT_FOUND`); one past its TTL or
   * evicted answers `RESULT_EXPIRED` saying when.
   */
  async get(handle: string, reader: string | undefined): Promise<Record<string, unknown>> {
    this.#expireDue();
    const entry = this.#entries.get(handle);
    if (!entry || (reader !== undefined && entry.owner !== reader)) {
      const gone = this.#gone.get(handle);
      if (gone && (reader === undefined || gone.owner === reader)) {
        throw new SwitchboardError('RESULT_EXPIRED', `The result "${handle}" was ${gone.why} at ${new Date(gone.at).toISOString()}; call the tool again`);
      }
      throw new SwitchboardError('RESULT_NOT_FOUND', `No kept result "${handle}"`);
    }
    if (entry.result) return entry.result;
    await entry.spilling;
    try {
      return JSON.parse(await readFile(entry.file as string, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      // Evicted while it was read.
      throw new SwitchboardError('RESULT_EXPIRED', `The result "${handle}" was evicted at ${new Date(this.#clock.now()).toISOString()}`, { cause: err });
    }
  }

  /** Resolves once the file writes and removals started so far are done. */
  async idle(): Promise<void> {
    while (this.#io.size > 0) await Promise.allSettled(this.#io);
  }

  #track(io: Promise<unknown>): void {
    this.#io.add(io);
    const done = (): void => void this.#io.delete(io);
    io.then(done, done);
  }

  /** Drops every result and, once the file work under way is done, the spill folder. Joinable. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#clock.clearTimeout(this.#timer);
      this.#entries.clear();
      this.#owners.clear();
      this.#ownerListeners.clear();
      await this.idle();
      if (this.#dir !== undefined && this.#dirMade) await rm(this.#dir, { recursive: true, force: true });
    })();
    return this.#closing;
  }

  #spillOverBound(): void {
    if (this.#memoryBytes <= this.#memoryBound) return;
    for (const [handle, entry] of this.#entries) {
      if (this.#memoryBytes <= this.#memoryBound) break;
      if (entry.file !== undefined) continue;
      if (this.#dir === undefined) {
        this.#drop(handle, 'evicted');
        continue;
      }
      this.#memoryBytes -= entry.bytes;
      this.#spill(handle, entry, this.#dir);
    }
  }

  #spill(handle: string, entry: Entry, dir: string): void {
    if (!this.#dirMade) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      this.#dirMade = true;
      this.#track(removeLeftovers(dirname(dir)));
    }
    const file = join(dir, `${handle}.json`);
    entry.file = file;
    this.#diskBytes += entry.bytes;
    const json = JSON.stringify(entry.result);
    const written = writeFile(file, json, { mode: 0o600 });
    this.#track(written);
    entry.spilling = written.then(
      () => {
        entry.result = undefined;
        entry.spilling = undefined;
      },
      (err: unknown) => {
        this.#log?.warn({ err, handle }, 'a kept result could not be spilled; it is evicted');
        this.#drop(handle, 'evicted');
      },
    );
    this.#evictOverDiskBound();
  }

  #evictOverDiskBound(): void {
    for (const [handle, entry] of this.#entries) {
      if (this.#diskBytes <= this.#diskBound) return;
      if (entry.file !== undefined) this.#drop(handle, 'evicted');
    }
  }

  #drop(handle: string, why: Gone['why']): void {
    const entry = this.#entries.get(handle);
    if (!entry) return;
    this.#entries.delete(handle);
    this.#counted(entry.owner, -1);
    if (entry.file !== undefined) {
      this.#diskBytes -= entry.bytes;
      const file = entry.file;
      this.#track((entry.spilling ?? Promise.resolve()).then(() => unlink(file)).catch(() => undefined));
    } else this.#memoryBytes -= entry.bytes;
    entry.result = undefined;
    this.#gone.set(handle, { owner: entry.owner, at: why === 'expired' ? entry.expiresAt : this.#clock.now(), why });
    if (this.#gone.size > GONE_REMEMBERED) this.#gone.delete(this.#gone.keys().next().value as string);
  }

  #expireDue(): void {
    const now = this.#clock.now();
    // Kept in order of creation, with one TTL: the first not due ends the sweep.
    for (const [handle, entry] of this.#entries) {
      if (entry.expiresAt > now) break;
      this.#drop(handle, 'expired');
    }
  }

  #schedule(): void {
    if (this.#timer !== undefined) return;
    const first = this.#entries.values().next().value;
    if (!first) return;
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.#expireDue();
      this.#schedule();
    }, first.expiresAt - this.#clock.now());
  }
}

/**
 * Removes the spill folders of daemons that are gone (`<pid>-<random>` whose pid no longer runs):
 * a killed daemon leaves its folder behind, and its results were for its own clients only.
 */
async function removeLeftovers(parent: string): Promise<void> {
  const names = await readdir(parent).catch(() => [] as string[]);
  for (const name of names) {
    const pid = Number(/^(\d+)-/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid || isRunning(pid)) continue;
    await rm(join(parent, name), { recursive: true, force: true }).catch(() => undefined);
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
