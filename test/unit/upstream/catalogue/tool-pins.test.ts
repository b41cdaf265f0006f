import type { Tool } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { canonicalJson, digest, ToolPins, type HeldTool } from '../../../../src/upstream/catalogue/tool-pins.js';
import { MemoryToolPinStore } from '../../../../src/store/tool-pin-store.js';
import type { DaemonEvent } from '../../../../src/events/daemon-events.js';

const tool = (name: string, description: string, extra: Partial<Tool> = {}): Tool => ({ name, description, inputSchema: { type: 'object' }, ...extra });

function splitter(mode: 'changes' | 'off' = 'changes') {
  const store = new MemoryToolPinStore();
  const events: DaemonEvent[] = [];
  const pins = new ToolPins({ store, mode, now: () => Date.UTC(2026, 0, 1), publish: (event) => events.push(event) });
  let previous: HeldTool[] = [];
  const split = (tools: Tool[], options: { pinNew?: boolean; mode?: 'changes' | 'off' } = {}) => {
    const out = pins.split('s', tools, { mode: options.mode, exposedName: (n) => `mcp_s_${n}`, previous, pinNew: options.pinNew ?? true });
    previous = out.held;
    return { served: out.served.map((t) => t.name), held: out.held };
  };
  return { pins, store, split, events };
}

describe('canonical JSON and digests', () => {
  it('ignores key order and absent values, not array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: undefined } })).toBe('{"a":{"d":[2,1]},"b":1}');
    expect(digest({ x: 1, y: 2 })).toBe(digest({ y: 2, x: 1 }));
    expect(digest([1, 2])).not.toBe(digest([2, 1]));
  });
});

describe('ToolPins.split', () => {
  it('serves a first listing and new tools; holds a served tool that changed, with what changed', async () => {
    const { pins, store, split } = splitter();
    await pins.load('s');
    expect(split([tool('a', 'A'), tool('b', 'B')])).toEqual({ served: ['a', 'b'], held: [] });
    expect((await store.pinsOf('s')).map((p) => p.tool).sort()).toEqual(['a', 'b']);
    const changed = split([tool('a', 'A2', { annotations: { readOnlyHint: false } }), tool('b', 'B'), tool('c', 'C')]);
    expect(changed.served).toEqual(['b', 'c']);
    expect(changed.held.map((h) => h.view)).toEqual([
      expect.objectContaining({
        name: 'a',
        exposedName: 'mcp_s_a',
        changed: ['description', 'annotations'],
        heldAt: '2026-01-01T00:00:00.000Z',
        before: expect.objectContaining({ description: 'A', annotations: null }),
        after: expect.objectContaining({ description: 'A2', annotations: { readOnlyHint: false } }),
      }),
    ]);
    // Listed again unchanged: the same entry (no new tools.held), still held.
    const again = split([tool('a', 'A2', { annotations: { readOnlyHint: false } }), tool('b', 'B'), tool('c', 'C')]);
    expect(again.held[0]).toBe(changed.held[0]);
    pins.approve('s', again.held);
    expect(split([tool('a', 'A2', { annotations: { readOnlyHint: false } }), tool('b', 'B'), tool('c', 'C')])).toEqual({ served: ['a', 'b', 'c'], held: [] });
  });

  it('announces an approval (pins.changed: names and hashes, whose approval it follows), not the pins a listing adds', async () => {
    const { pins, split, events } = splitter();
    await pins.load('s');
    split([tool('a', 'A'), tool('b', 'B')]);
    const { held } = split([tool('a', 'A2'), tool('b', 'B2')]);
    expect(events).toEqual([]);
    pins.approve('s', held.slice(0, 1));
    pins.approve('s', held.slice(1), 'replica-a');
    expect(events).toEqual([
      { type: 'pins.changed', server: 's', tools: [{ name: 'a', hash: held[0]!.hash }] },
      { type: 'pins.changed', server: 's', tools: [{ name: 'b', hash: held[1]!.hash }], follows: 'replica-a' },
    ]);
    // Nothing approved, nothing said.
    pins.approve('s', []);
    expect(events).toHaveLength(2);
  });

  it('serves every change with pinning off, and pins it', async () => {
    const { pins, split } = splitter('off');
    await pins.load('s');
    split([tool('a', 'A')]);
    expect(split([tool('a', 'A2')])).toEqual({ served: ['a'], held: [] });
    // Back on for this server: compared with what was served last.
    expect(split([tool('a', 'A2')], { mode: 'changes' })).toEqual({ served: ['a'], held: [] });
    expect(split([tool('a', 'A3')], { mode: 'changes' }).served).toEqual([]);
  });

  it('judges nothing before the pins are loaded, and pins nothing from a cached list', async () => {
    const { pins, store, split } = splitter();
    expect(split([tool('a', 'A')])).toEqual({ served: ['a'], held: [] });
    await pins.load('s');
    expect(split([tool('a', 'cached')], { pinNew: false })).toEqual({ served: ['a'], held: [] });
    expect(await store.pinsOf('s')).toEqual([]);
    expect(split([tool('a', 'live')])).toEqual({ served: ['a'], held: [] });
  });
});
