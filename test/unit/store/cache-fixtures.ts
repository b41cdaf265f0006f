import type { Tool } from '@modelcontextprotocol/server';

// Kept free of vitest imports: read-only-child.ts bundles this into a plain child process.

export const TOOLS: Tool[] = [
  {
    name: 'echo',
    description: 'Echoes its input',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    annotations: { readOnlyHint: true },
  },
  { name: 'add', inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } },
];

export const HASH = 'a'.repeat(64);
