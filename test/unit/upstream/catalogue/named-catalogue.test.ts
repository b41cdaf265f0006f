import type { Tool } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import type { NameDiff } from '../../../../src/upstream/catalogue/named-catalogue.js';
import { ToolCatalogue } from '../../../../src/upstream/catalogue/tool-catalogue.js';
import { buildCatalogue, type CatalogueEntry } from '../../../../src/upstream/catalogue/tool-bridge.js';

/**
 * The catalogue changes one server at a time (name-index.ts, named-catalogue.ts). Whatever the
 * sequence of changes, it must hold exactly what `buildCatalogue` computes from scratch over the
 * same servers — names, collisions, order, fields — and report the same name diffs a full
 * before/after comparison gives. And a change must touch only the servers it concerns.
 */

/** A small deterministic PRNG (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SERVERS = ['a', 'b', 'c', 'd', 'e_x'];
/** Few distinct names and prefixes, so names collide, repeat within a server, and interleave. */
const NAMES = ['echo', 'x', 'x.y', 'x_y', 'add', 'a'.repeat(70), 'b_echo', 'mcp_b_echo', 'tool__1'];
const PREFIXES = [undefined, '', 'p_', 'mcp_a_'];

function fullDiff(before: ReadonlyArray<{ name: string; server: string; originalName: string }>, after: typeof before): Map<string, NameDiff> {
  const key = (t: { server: string; originalName: string }) => `${t.server}\u0000${t.originalName}`;
  const beforeMap = new Map(before.map((t) => [t.name, key(t)]));
  const afterMap = new Map(after.map((t) => [t.name, key(t)]));
  const out = new Map<string, NameDiff>();
  const diffOf = (server: string) => {
    let d = out.get(server);
    if (!d) out.set(server, (d = { added: [], removed: [] }));
    return d;
  };
  for (const t of before) if (afterMap.get(t.name) !== key(t)) diffOf(t.server).removed.push(t.name);
  for (const t of after) if (beforeMap.get(t.name) !== key(t)) diffOf(t.server).added.push(t.name);
  for (const d of out.values()) {
    d.added.sort();
    d.removed.sort();
  }
  return out;
}

describe('NamedCatalogue, one server at a time', () => {
  it('always equals buildCatalogue over the same servers, and reports the full before/after diff', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const next = random(seed);
      const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
      const catalogue = new ToolCatalogue();
      const entries = new Map<string, CatalogueEntry>();
      for (let step = 0; step < 40; step++) {
        const server = pick(SERVERS);
        const count = next() < 0.2 ? 0 : 1 + Math.floor(next() * 6);
        const tools: Tool[] = Array.from({ length: count }, () => ({ name: pick(NAMES), description: `d${Math.floor(next() * 3)}`, inputSchema: { type: 'object' } }));
        const flags = { deferred: next() < 0.3, stale: next() < 0.2, prefix: pick(PREFIXES) };
        const before = [...catalogue.list()];
        const diffs = catalogue.setServer(server, 'Test', tools, flags);
        if (count === 0) entries.delete(server);
        else
          entries.set(server, {
            server,
            providerName: 'Test',
            tools,
            deferred: flags.deferred,
            stale: flags.stale,
            ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}),
          });

        const expected = buildCatalogue([...entries.values()]);
        const context = `seed ${seed}, step ${step}`;
        expect(JSON.stringify(catalogue.list()), context).toBe(JSON.stringify(expected.tools));
        expect(catalogue.collisions(), context).toEqual(expected.collisions);
        const want = fullDiff(before, catalogue.list());
        if (!want.has(server)) want.set(server, { added: [], removed: [] });
        expect(Object.fromEntries(diffs), context).toEqual(Object.fromEntries(want));
        for (const name of SERVERS) {
          expect(catalogue.itemsOf(name), context).toEqual(catalogue.list().filter((t) => t.server === name));
        }
      }
    }
  });

  it('keeps every other server’s items as they were when one server changes', () => {
    const catalogue = new ToolCatalogue();
    const tools = (n: number): Tool[] => Array.from({ length: n }, (_, i) => ({ name: `tool_${i}`, inputSchema: { type: 'object' } }));
    for (const server of ['one', 'two', 'three']) catalogue.setServer(server, 'Test', tools(50), { deferred: true, stale: false });
    const others = [...catalogue.itemsOf('one'), ...catalogue.itemsOf('three')];
    const revisions = ['one', 'two', 'three'].map((s) => catalogue.revisionOf(s));

    catalogue.setServer('two', 'Test', tools(51), { deferred: false, stale: false });

    // The same objects: nothing was bridged or renamed again outside `two`.
    expect([...catalogue.itemsOf('one'), ...catalogue.itemsOf('three')].every((item, i) => item === others[i])).toBe(true);
    expect(['one', 'two', 'three'].map((s) => catalogue.revisionOf(s) === revisions[['one', 'two', 'three'].indexOf(s)])).toEqual([true, false, true]);
    expect(catalogue.itemsOf('two').every((t) => !t.deferred)).toBe(true);
    expect(catalogue.list().length).toBe(151);
  });
});
