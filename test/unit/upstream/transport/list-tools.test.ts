import { describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/server';
import { isSwitchboardError } from '../../../../src/errors.js';
import { collectToolPages, type ToolPage } from '../../../../src/upstream/transport/list-tools.js';

const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' } });

describe('collectToolPages', () => {
  it('follows nextCursor until a page has none, keeping order', async () => {
    const cursors: (string | undefined)[] = [];
    const pages: Record<string, ToolPage> = {
      start: { tools: [tool('a'), tool('b')], nextCursor: 'p2' },
      p2: { tools: [tool('c')], nextCursor: 'p3' },
      p3: { tools: [tool('d')] },
    };
    const { tools } = await collectToolPages(async (cursor) => {
      cursors.push(cursor);
      return pages[cursor ?? 'start']!;
    });
    expect(tools.map((t) => t.name)).toEqual(['a', 'b', 'c', 'd']);
    expect(cursors).toEqual([undefined, 'p2', 'p3']);
  });

  it('treats an empty nextCursor as the end', async () => {
    const { tools } = await collectToolPages(async () => ({ tools: [tool('a')], nextCursor: '' }));
    expect(tools).toHaveLength(1);
  });

  it('rejects a cursor it has already followed', async () => {
    let calls = 0;
    const error = await collectToolPages(async () => {
      calls++;
      return { tools: [tool(`t${calls}`)], nextCursor: 'same' };
    }).catch((err: unknown) => err);
    expect(isSwitchboardError(error, 'UPSTREAM_CONNECT_FAILED')).toBe(true);
    expect((error as Error).message).toMatch(/cursor "same" twice/);
    expect(calls).toBe(2);
  });

  it('stops at the page cap', async () => {
    let calls = 0;
    const error = await collectToolPages(async () => ({ tools: [], nextCursor: `c${++calls}` }), 5).catch((err: unknown) => err);
    expect((error as Error).message).toMatch(/more than 5 pages/);
    expect(calls).toBe(5);
  });
});
