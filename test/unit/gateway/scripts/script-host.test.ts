import { describe, expect, it } from 'vitest';
import { scriptHost, ToolCallError, valueOf } from '../../../../src/gateway/scripts/script-host.js';

describe('what a script sees of a tool result (issue #39)', () => {
  it('is the structuredContent when there is one', () => {
    expect(valueOf({ content: [{ type: 'text', text: '5' }], structuredContent: { sum: 5 } })).toEqual({ sum: 5 });
  });

  it('is the text, parsed when it is JSON, the texts joined by newlines', () => {
    expect(valueOf({ content: [{ type: 'text', text: '{"a":[1,2]}' }] })).toEqual({ a: [1, 2] });
    expect(
      valueOf({
        content: [
          { type: 'text', text: 'plain' },
          { type: 'text', text: 'words' },
        ],
      }),
    ).toBe('plain\nwords');
  });

  it('is the content items when some are not text', () => {
    const content = [{ type: 'image' as const, data: 'AAAA', mimeType: 'image/png' }];
    expect(valueOf({ content })).toEqual(content);
  });

  it("throws a tool's isError answer with the code of its _meta", () => {
    const failed = () => valueOf({ content: [{ type: 'text', text: 'MCP error: no' }], isError: true, _meta: { 'switchboard/error': { code: 'APPROVAL_DENIED' } } });
    expect(failed).toThrow(ToolCallError);
    expect(failed).toThrow(expect.objectContaining({ code: 'APPROVAL_DENIED', message: 'MCP error: no' }));
    expect(() => valueOf({ content: [], isError: true })).toThrow(expect.objectContaining({ code: 'TOOL_ERROR' }));
  });

  it('lists the view by name and description, and searches it (ten at most, with schemas)', async () => {
    const tool = (name: string) => ({ name, description: `does ${name}`, inputSchema: { type: 'object' as const }, annotations: { readOnlyHint: true } });
    const host = scriptHost({ call: () => Promise.reject(new Error('unused')), search: async () => Array.from({ length: 12 }, (_, i) => tool(`t${i}`)), tools: () => [tool('a')] });
    expect(host.tools).toEqual([{ name: 'a', description: 'does a' }]);
    const found = (await host.search('x', new AbortController().signal)) as unknown[];
    expect(found).toHaveLength(10);
    expect(found[0]).toEqual({ name: 't0', description: 'does t0', inputSchema: { type: 'object' } });
  });
});
