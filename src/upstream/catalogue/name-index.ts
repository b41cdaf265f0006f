import { compare, defaultPrefix, exposedName, uniqueHashedName, type NameCollision, type NamedEntry } from './naming.js';

/**
 * The exposed names of every server's items, kept up to date one server at a time. It gives the
 * same names and collisions as `buildNamed` over all servers (naming.ts; the unit test compares
 * the two), but replacing one server costs that server's items plus the items whose names are
 * shared with another's — not the whole aggregate, which made a start with 200 servers
 * quadratic (every server's connect renamed all 10 000 tools).
 */

/** One item of one server and the name it is exposed under. */
export interface Slot<T extends { name: string }> {
  entry: NamedEntry<T>;
  item: T;
  /** `<prefix><name>` sanitised: the name unless it collides. */
  base: string;
  name: string;
  /** A repeat of an earlier (server, name) pair: not exposed. */
  dropped: boolean;
}

export class NameIndex<T extends { name: string }> {
  /** base name → the slots that want it. */
  private readonly groups = new Map<string, Slot<T>[]>();
  /** Base names wanted by more than one slot: the only places names are decided by more than the item. */
  private readonly shared = new Set<string>();
  private readonly byServer = new Map<string, Slot<T>[]>();
  private collisionList: NameCollision[] = [];

  slotsOf(server: string): readonly Slot<T>[] {
    return this.byServer.get(server) ?? [];
  }

  collisions(): readonly NameCollision[] {
    return this.collisionList;
  }

  /**
   * Replaces one server's items (`undefined` removes the server) and returns every server whose
   * slots changed: `server` itself, and any other whose item a collision renamed or released.
   */
  set(server: string, entry: NamedEntry<T> | undefined): Set<string> {
    const touched = new Set<string>([server]);
    for (const slot of this.byServer.get(server) ?? []) this.leave(slot, touched);
    this.byServer.delete(server);
    if (entry) {
      const prefix = entry.prefix ?? defaultPrefix(server);
      const slots = entry.items.map((item): Slot<T> => {
        const base = exposedName(prefix, server, item.name);
        return { entry, item, base, name: base, dropped: false };
      });
      this.byServer.set(server, slots);
      for (const slot of slots) this.join(slot);
    }
    this.resolveShared(server, touched);
    return touched;
  }

  clear(): void {
    this.groups.clear();
    this.shared.clear();
    this.byServer.clear();
    this.collisionList = [];
  }

  /** Whether another slot's name changes is decided in `resolveShared`, where the group is. */
  private join(slot: Slot<T>): void {
    const group = this.groups.get(slot.base);
    if (!group) return void this.groups.set(slot.base, [slot]);
    group.push(slot);
    this.shared.add(slot.base);
  }

  private leave(slot: Slot<T>, touched: Set<string>): void {
    const group = this.groups.get(slot.base) as Slot<T>[];
    const rest = group.filter((other) => other !== slot);
    if (rest.length === 0) return void this.groups.delete(slot.base);
    this.groups.set(slot.base, rest);
    if (rest.length === 1) {
      // The last one left takes the plain name back.
      this.shared.delete(slot.base);
      const [alone] = rest as [Slot<T>];
      if (alone.name !== alone.base || alone.dropped) touched.add(alone.entry.server);
      alone.name = alone.base;
      alone.dropped = false;
    }
  }

  /**
   * `buildNamed`'s collision rules over the shared names only: groups in name order, members in
   * (server, originalName) order; the first keeps the name, the rest get `<prefix>_<hash>`,
   * never a name another slot wants or was given. A loser's hashed name can depend on every
   * base name (`used`), so all shared groups are decided again; there are few next to the items.
   */
  private resolveShared(server: string, touched: Set<string>): void {
    const assigned = new Set<string>();
    const used = { has: (name: string): boolean => this.groups.has(name) || assigned.has(name) };
    const collisions: NameCollision[] = [];
    for (const base of [...this.shared].sort(compare)) {
      // Stable sort: a pair listed twice keeps its first definition.
      const group = [...(this.groups.get(base) as Slot<T>[])].sort((a, b) => compare(a.entry.server, b.entry.server) || compare(a.item.name, b.item.name));
      const distinct: Slot<T>[] = [];
      group.forEach((slot, i) => {
        const previous = group[i - 1];
        const dropped = previous !== undefined && previous.entry.server === slot.entry.server && previous.item.name === slot.item.name;
        let name = base;
        if (!dropped) {
          if (distinct.length > 0) {
            name = uniqueHashedName(base, slot.entry.server, slot.item.name, used);
            assigned.add(name);
          }
          distinct.push(slot);
        }
        if (slot.name !== name || slot.dropped !== dropped) touched.add(slot.entry.server);
        slot.name = name;
        slot.dropped = dropped;
      });
      if (distinct.length > 1) {
        collisions.push({ name: base, tools: distinct.map((s) => ({ server: s.entry.server, originalName: s.item.name, exposedName: s.name })) });
      }
    }
    this.collisionList = collisions;
    touched.add(server);
  }
}
