import { buildNamed, type Named, type NameCollision, type NamedEntry } from './naming.js';

export interface NameDiff {
  added: string[];
  removed: string[];
}

/** What the catalogue needs of an item as exposed: its name, and where it came from. */
export interface Exposed {
  name: string;
  server: string;
  originalName: string;
}

/**
 * The aggregate of one named kind (tools, prompts) across every server, rebuilt when one
 * server's items change. Names are resolved across all servers at once so collisions come out
 * the same whatever the order of arrival. `version` increments on every change; HTTP caches
 * (ETag, serialised bodies) key on it.
 */
export class NamedCatalogue<T extends { name: string }, B extends Exposed> {
  private readonly entries = new Map<string, NamedEntry<T>>();
  private items: B[] = [];
  private byName = new Map<string, B>();
  private byServer = new Map<string, string[]>();
  private collisionList: NameCollision[] = [];
  private currentVersion = 0;

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
    return this.collisionList;
  }

  hasServer(server: string): boolean {
    return this.entries.has(server);
  }

  namesOf(server: string): string[] {
    return this.byServer.get(server) ?? [];
  }

  /**
   * Replaces one server's items (an empty list removes it) and returns the exposed-name diff of
   * every server whose names changed — always including `server` itself. Another server can be
   * affected: a new item may take a name whose collision renames that server's item.
   */
  setServer(
    server: string,
    providerName: string,
    items: readonly T[],
    flags: { deferred: boolean; stale: boolean; prefix?: string | undefined },
  ): Map<string, NameDiff> {
    const before = this.byName;
    if (items.length === 0) this.entries.delete(server);
    else {
      const { prefix, ...rest } = flags;
      this.entries.set(server, { server, providerName, items, ...rest, ...(prefix !== undefined ? { prefix } : {}) });
    }
    this.rebuild();
    return diffByServer(before, this.byName, server);
  }

  clear(): void {
    this.entries.clear();
    this.rebuild();
  }

  private rebuild(): void {
    const { items, collisions } = buildNamed([...this.entries.values()], this.bridge);
    this.items = items;
    this.collisionList = collisions;
    this.byName = new Map(items.map((item) => [item.name, item]));
    this.byServer = new Map();
    for (const item of items) {
      const names = this.byServer.get(item.server);
      if (names) names.push(item.name);
      else this.byServer.set(item.server, [item.name]);
    }
    this.currentVersion += 1;
  }
}

function sameItem(a: Exposed | undefined, b: Exposed): boolean {
  return a !== undefined && a.server === b.server && a.originalName === b.originalName;
}

/** Names that appeared or went away between two aggregates, grouped by the owning server. */
function diffByServer(before: ReadonlyMap<string, Exposed>, after: ReadonlyMap<string, Exposed>, always: string): Map<string, NameDiff> {
  const diffs = new Map<string, NameDiff>([[always, { added: [], removed: [] }]]);
  const diffOf = (server: string): NameDiff => {
    let diff = diffs.get(server);
    if (!diff) diffs.set(server, (diff = { added: [], removed: [] }));
    return diff;
  };
  for (const [name, item] of before) if (!sameItem(after.get(name), item)) diffOf(item.server).removed.push(name);
  for (const [name, item] of after) if (!sameItem(before.get(name), item)) diffOf(item.server).added.push(name);
  for (const diff of diffs.values()) {
    diff.added.sort();
    diff.removed.sort();
  }
  return diffs;
}
