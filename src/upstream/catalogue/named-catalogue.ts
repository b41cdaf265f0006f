import { NameIndex } from './name-index.js';
import { compare, type Named, type NameCollision, type NamedEntry } from './naming.js';

export interface NameDiff {
  added: string[];
  removed: string[];
}

/**
 * A stretch of the sorted aggregate whose items all come from one server: `count` of that
 * server's items (in `itemsOf(server)` order) starting at `offset`. Under the default prefixes a
 * server's items form one run; prefixes of the operator's choosing can interleave servers.
 */
export interface ServerRun {
  server: string;
  offset: number;
  count: number;
}

/** What the catalogue needs of an item as exposed: its name, and where it came from. */
export interface Exposed {
  name: string;
  server: string;
  originalName: string;
}

/**
 * The aggregate of one named kind (tools, prompts) across every server, changed one server at a
 * time. Names are resolved across all servers (`NameIndex`) so collisions come out the same
 * whatever the order of arrival. A change costs the items of the servers it touched: their
 * items are bridged again and spliced into the sorted list; every other server's items stay the
 * same objects. `version` increments on every change; HTTP caches (ETag, serialised bodies) key
 * on it. Each server also has a `revisionOf` that moves only when that server's items as
 * exposed changed, so a cache can rebuild one server's share and reuse the rest.
 */
export class NamedCatalogue<T extends { name: string }, B extends Exposed> {
  private readonly entries = new Map<string, NamedEntry<T>>();
  private readonly names = new NameIndex<T>();
  private items: B[] = [];
  private readonly byName = new Map<string, B>();
  /** server → its items in name order. */
  private readonly byServer = new Map<string, B[]>();
  /** `runs()`, worked out when first asked for after a change. */
  private runList: ServerRun[] | undefined = [];
  private currentVersion = 0;
  /** server → revision; revisions come from one counter, so a number is never reused (`clear()` included). */
  private readonly revisions = new Map<string, number>();
  private revisionCounter = 0;

  constructor(private readonly bridge: (named: Named<T>) => B) {}

  get version(): number {
    return this.currentVersion;
  }

  list(): readonly B[] {
    return this.items;
  }

  get(name: string): B | undefined {
    return this.byName.get(name);
  }

  collisions(): readonly NameCollision[] {
    return this.names.collisions();
  }

  hasServer(server: string): boolean {
    return this.entries.has(server);
  }

  namesOf(server: string): string[] {
    return (this.byServer.get(server) ?? []).map((item) => item.name);
  }

  /** One server's items, in aggregate (name) order. */
  itemsOf(server: string): readonly B[] {
    return this.byServer.get(server) ?? [];
  }

  /** The aggregate as runs of one server's items each, in aggregate order. */
  runs(): readonly ServerRun[] {
    return (this.runList ??= runsOf(this.items));
  }

  /**
   * Moves whenever `server`'s items as exposed may have changed (its own list or flags, or a
   * name a collision with another server's item renamed); the same number means the same items.
   */
  revisionOf(server: string): number {
    let revision = this.revisions.get(server);
    if (revision === undefined) this.revisions.set(server, (revision = ++this.revisionCounter));
    return revision;
  }

  /**
   * Replaces one server's items (an empty list removes it) and returns the exposed-name diff of
   * every server whose names changed — always including `server` itself. Another server can be
   * affected: a new item may take a name whose collision renames that server's item.
   */
  setServer(server: string, providerName: string, items: readonly T[], flags: { deferred: boolean; stale: boolean; prefix?: string | undefined }): Map<string, NameDiff> {
    let entry: NamedEntry<T> | undefined;
    if (items.length === 0) this.entries.delete(server);
    else {
      const { prefix, ...rest } = flags;
      entry = { server, providerName, items, ...rest, ...(prefix !== undefined ? { prefix } : {}) };
      this.entries.set(server, entry);
    }
    const touched = this.names.set(server, entry);
    const before: B[] = [];
    const after: B[] = [];
    for (const name of touched) {
      before.push(...(this.byServer.get(name) ?? []));
      const own: B[] = [];
      for (const slot of this.names.slotsOf(name)) if (!slot.dropped) own.push({ ...this.bridge(slot), name: slot.name });
      own.sort(byName);
      if (own.length > 0) this.byServer.set(name, own);
      else this.byServer.delete(name);
      after.push(...own);
      this.revisions.set(name, ++this.revisionCounter);
    }
    after.sort(byName);
    this.splice(before, after);
    return diffByServer(before, after, server);
  }

  clear(): void {
    this.entries.clear();
    this.names.clear();
    this.items = [];
    this.byName.clear();
    this.byServer.clear();
    this.revisions.clear();
    this.changed();
  }

  /** Takes `removed` out of the sorted list and puts `added` (sorted) in, without sorting it all again. */
  private splice(removed: readonly B[], added: readonly B[]): void {
    for (const item of removed) this.byName.delete(item.name);
    // Positions in the old list: where each removed item is, and where each added one goes.
    const old = this.items;
    const drop = removed.map((item) => lowerBound(old, item.name)).sort((a, b) => a - b);
    const at = added.map((item) => lowerBound(old, item.name));
    const out = new Array<B>(old.length - drop.length + added.length);
    let o = 0;
    let a = 0;
    let d = 0;
    for (let i = 0; i <= old.length; i++) {
      while (a < added.length && at[a] === i) out[o++] = added[a++] as B;
      if (i === old.length) break;
      if (drop[d] === i) d += 1;
      else out[o++] = old[i] as B;
    }
    this.items = out;
    for (const item of added) this.byName.set(item.name, item);
    this.changed();
  }

  private changed(): void {
    this.runList = undefined;
    this.currentVersion += 1;
  }
}

const byName = (a: Exposed, b: Exposed): number => compare(a.name, b.name);

/** The first index of sorted `items` whose name is not below `name`. */
function lowerBound(items: readonly Exposed[], name: string): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((items[mid] as Exposed).name < name) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function runsOf(items: readonly Exposed[]): ServerRun[] {
  const runs: ServerRun[] = [];
  // Items already placed per server, updated once per run (runs are few; items are many).
  const placed = new Map<string, number>();
  let run: ServerRun | undefined;
  for (const item of items) {
    if (run?.server === item.server) {
      run.count += 1;
      continue;
    }
    if (run) placed.set(run.server, run.offset + run.count);
    runs.push((run = { server: item.server, offset: placed.get(item.server) ?? 0, count: 1 }));
  }
  return runs;
}

function sameItem(a: Exposed | undefined, b: Exposed): boolean {
  return a !== undefined && a.server === b.server && a.originalName === b.originalName;
}

/**
 * Names that appeared or went away, grouped by the owning server. Only the touched servers'
 * items can differ, so `before` and `after` are theirs alone.
 */
function diffByServer(before: readonly Exposed[], after: readonly Exposed[], always: string): Map<string, NameDiff> {
  const diffs = new Map<string, NameDiff>([[always, { added: [], removed: [] }]]);
  const diffOf = (server: string): NameDiff => {
    let diff = diffs.get(server);
    if (!diff) diffs.set(server, (diff = { added: [], removed: [] }));
    return diff;
  };
  const beforeByName = new Map(before.map((item) => [item.name, item]));
  const afterByName = new Map(after.map((item) => [item.name, item]));
  for (const item of before) if (!sameItem(afterByName.get(item.name), item)) diffOf(item.server).removed.push(item.name);
  for (const item of after) if (!sameItem(beforeByName.get(item.name), item)) diffOf(item.server).added.push(item.name);
  for (const diff of diffs.values()) {
    diff.added.sort();
    diff.removed.sort();
  }
  return diffs;
}
