import type { Tool } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { filterTools } from '../../../../src/upstream/catalogue/tool-filter.js';

const tools = ['a', 'b', 'c'].map((name): Tool => ({ name, inputSchema: { type: 'object' } }));
const names = (list: Tool[]) => list.map((t) => t.name);

describe('filterTools', () => {
  it('keeps every tool without a filter', () => {
    expect(filterTools(tools, {})).toBe(tools);
  });

  it('includeTools keeps only the named tools, excludeTools hides and wins over includeTools', () => {
    expect(names(filterTools(tools, { includeTools: ['a', 'c', 'z'] }))).toEqual(['a', 'c']);
    expect(names(filterTools(tools, { excludeTools: ['b'] }))).toEqual(['a', 'c']);
    expect(names(filterTools(tools, { includeTools: ['a', 'b'], excludeTools: ['b'] }))).toEqual(['a']);
    expect(names(filterTools(tools, { includeTools: [] }))).toEqual([]);
  });
});
