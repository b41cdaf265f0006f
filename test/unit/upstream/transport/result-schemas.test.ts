import { describe, expect, it } from 'vitest';
import { ToolPageResult } from '../../../../src/upstream/transport/result-schemas.js';

/** The problem ToolPageResult names for a page holding `tool`, or undefined when it passes. */
async function problemWith(tool: unknown): Promise<string | undefined> {
  const result = await ToolPageResult['~standard'].validate({ tools: [{ name: 'fine', description: 'ok', inputSchema: { type: 'object' } }, tool] });
  return 'issues' in result && result.issues ? result.issues[0]?.message : undefined;
}

describe('ToolPageResult', () => {
  it('passes a tool with only a name, and every optional field of the right kind, as sent', async () => {
    expect(await problemWith({ name: 'bare' })).toBeUndefined();
    const full = {
      name: 'full',
      title: 'Full',
      description: 'd',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object' },
      annotations: { title: 'Full', readOnlyHint: true },
      _meta: { x: 1 },
      unknownField: [1],
    };
    expect(await problemWith(full)).toBeUndefined();
    const page = { tools: [full] };
    const result = await ToolPageResult['~standard'].validate(page);
    expect('value' in result && result.value).toBe(page);
  });

  it('refuses the page for a tool whose text is not a string or whose schema or annotations is not an object, naming tool and field', async () => {
    expect(await problemWith({ description: 'no name' })).toBe('a tool has no name');
    expect(await problemWith({ name: 'odd', description: 42 })).toBe('tool "odd": "description" is not a string');
    expect(await problemWith({ name: 'odd', description: null })).toBe('tool "odd": "description" is not a string');
    expect(await problemWith({ name: 'odd', title: { en: 'x' } })).toBe('tool "odd": "title" is not a string');
    expect(await problemWith({ name: 'odd', inputSchema: 'object' })).toBe('tool "odd": "inputSchema" is not an object');
    expect(await problemWith({ name: 'odd', outputSchema: [] })).toBe('tool "odd": "outputSchema" is not an object');
    expect(await problemWith({ name: 'odd', annotations: true })).toBe('tool "odd": "annotations" is not an object');
    expect(await problemWith({ name: 'odd', annotations: { title: 7 } })).toBe('tool "odd": "annotations.title" is not a string');
    expect(await problemWith({ name: 'x'.repeat(300), title: 1 })).toBe(`tool "${'x'.repeat(100)}": "title" is not a string`);
  });
});
