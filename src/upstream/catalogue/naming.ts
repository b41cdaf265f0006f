import { createHash } from 'node:crypto';

/**
 * Exposed names of named things (tools, prompts) across servers (SPEC §7): `<prefix><name>`,
 * sanitised, at most 64 characters, unique in the aggregate. Pure functions: no I/O, no state.
 */

/** Longest exposed name; many MCP clients and model APIs reject longer tool names. */
export const MAX_NAME_LENGTH = 64;
const HASH_LENGTH = 8;
/** Room left for the readable part when `_<hash>` is appended. */
const PREFIX_LENGTH = MAX_NAME_LENGTH - HASH_LENGTH - 1;

/** The prefix a server's names get unless its config says otherwise: `mcp_<server>_`. */
export function defaultPrefix(server: string): string {
  return `mcp_${server}_`;
}

/** SEP-986: what a tool name may be made of. */
const SEP_986_INVALID = /[^A-Za-z0-9_.-]+/g;

/**
 * `<prefix><name>`, a SEP-986 name (at most 64 of `[A-Za-z0-9_.-]`). Under the default prefix
 * every run of characters outside `[A-Za-z0-9-]` (underscores included) becomes one `_` — the
 * tidy `mcp_<server>_<tool>` form every model API accepts. Under a prefix of the operator's
 * choosing (`""` included) the name stays as the server wrote it where SEP-986 allows it, and
 * only runs of other characters become `_`. Over 64 characters it is cut and ends in `_<hash>`,
 * the hash taken over the unsanitised (server, name) pair, so names that share a long prefix
 * stay apart.
 */
export function exposedName(prefix: string, server: string, name: string): string {
  const base = prefix === defaultPrefix(server) ? `${prefix}${name}`.replace(/[^A-Za-z0-9-]+/g, '_') : `${prefix}${name}`.replace(SEP_986_INVALID, '_');
  return base.length <= MAX_NAME_LENGTH ? base : withHash(base, shortHash(server, name));
}

/** One server's named items, as the aggregate is built from them. */
export interface NamedEntry<T extends { name: string }> {
  server: string;
  providerName: string;
  /** @default `mcp_<server>_` */
  prefix?: string;
  items: readonly T[];
  deferred: boolean;
  stale?: boolean;
}

export interface NameCollision {
  /** The exposed name every item below mapped to. */
  name: string;
  /** Sorted by (server, originalName); the first kept `name`. */
  tools: Array<{ server: string; originalName: string; exposedName: string }>;
}

/** An item with the exposed name it was given, for a kind's bridge to build its view from. */
export interface Named<T extends { name: string }> {
  entry: NamedEntry<T>;
  item: T;
  name: string;
}

interface Candidate<T extends { name: string }> extends Named<T> {
  /** A repeat of an earlier (server, name) pair. */
  dropped: boolean;
}

/**
 * The aggregate, sorted by exposed name. Names that collide go, in (server, originalName) order,
 * first to the plain name, then to `<prefix>_<hash>` — so the outcome depends only on the set of
 * items, never on the order servers answered in. Linear apart from the sorts; hashes are
 * computed only for long names and collisions.
 */
export function buildNamed<T extends { name: string }, B>(
  entries: ReadonlyArray<NamedEntry<T>>,
  bridge: (named: Named<T>) => B,
): { items: Array<B & { name: string }>; collisions: NameCollision[] } {
  const byName = new Map<string, Candidate<T>[]>();
  for (const entry of entries) {
    const prefix = entry.prefix ?? defaultPrefix(entry.server);
    for (const item of entry.items) {
      const candidate: Candidate<T> = { entry, item, name: exposedName(prefix, entry.server, item.name), dropped: false };
      const group = byName.get(candidate.name);
      if (group) group.push(candidate);
      else byName.set(candidate.name, [candidate]);
    }
  }

  const shared: Array<[string, Candidate<T>[]]> = [];
  for (const pair of byName) if (pair[1].length > 1) shared.push(pair);
  shared.sort(([a], [b]) => compare(a, b));
  const collisions: NameCollision[] = [];
  let used: Set<string> | undefined;
  for (const [name, group] of shared) {
    // Stable sort: a pair listed twice keeps its first definition (MCP wants names unique per
    // server, so this only tidies up after a misbehaving one).
    group.sort((a, b) => compare(a.entry.server, b.entry.server) || compare(a.item.name, b.item.name));
    const distinct = group.filter((c, i) => {
      const previous = group[i - 1];
      c.dropped = previous !== undefined && previous.entry.server === c.entry.server && previous.item.name === c.item.name;
      return !c.dropped;
    });
    if (distinct.length === 1) continue;
    used ??= new Set(byName.keys());
    for (const loser of distinct.slice(1)) {
      loser.name = uniqueHashedName(name, loser.entry.server, loser.item.name, used);
      used.add(loser.name);
    }
    collisions.push({
      name,
      tools: distinct.map((c) => ({ server: c.entry.server, originalName: c.item.name, exposedName: c.name })),
    });
  }

  const items: Array<B & { name: string }> = [];
  for (const group of byName.values()) {
    for (const candidate of group) if (!candidate.dropped) items.push({ ...bridge(candidate), name: candidate.name });
  }
  items.sort((a, b) => compare(a.name, b.name));
  return { items, collisions };
}

/**
 * `<base cut short>_<hash of the pair>`. Another item may (against all odds) already hold that
 * name — a 32-bit hash clash, or an item literally named like it — so the hash input is salted
 * with a counter until the name is free. Groups and their members are visited in sorted order,
 * so `used` grows the same way, and the outcome is the same, whatever the input order.
 */
export function uniqueHashedName(base: string, server: string, name: string, used: { has(name: string): boolean }): string {
  let candidate = withHash(base, shortHash(server, name));
  for (let salt = 1; used.has(candidate); salt += 1) candidate = withHash(base, shortHash(server, `${name}\u0000${salt}`));
  return candidate;
}

function withHash(base: string, hash: string): string {
  // Dropping a trailing `_` keeps the "no `__`" property of sanitised names.
  return `${base.slice(0, PREFIX_LENGTH).replace(/_+$/, '')}_${hash}`;
}

function shortHash(server: string, name: string): string {
  return createHash('sha256').update(`${server}\u0000${name}`).digest('hex').slice(0, HASH_LENGTH);
}

/** Code-unit order: the same on every machine, unlike `localeCompare`. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
