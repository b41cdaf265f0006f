import type { BridgedTool } from './tool-bridge.js';

/**
 * What tool search indexes of a tool (issue #37 item 2): everything its server says about it, each
 * in a field of its own so each can weigh what it is worth (`SearchWeights`).
 */
export const FIELDS = ['name', 'title', 'description', 'params', 'annotations', 'server'] as const;
export type Field = (typeof FIELDS)[number];

/** Caps what one tool contributes from its schema: a huge schema must not dominate the index. */
const MAX_PARAMS_TEXT = 4_000;

/**
 * Caps the description indexed. What a tool does is said first; some servers append a whole
 * manual (one in the corpus: 34 KB), which would otherwise match every query a little.
 */
const MAX_DESCRIPTION_TEXT = 1_000;

/** Caps the server's own words (its `instructions`) indexed with each of its tools. */
const MAX_SERVER_TEXT = 600;

/** The text of each field of `tool`; `about` is what its server says of itself, if anything. */
export function fieldTexts(tool: BridgedTool, about: string | undefined): Record<Field, string> {
  return {
    // The exposed name carries the server prefix; the original name is the server's own.
    name: tool.name === tool.originalName ? tool.name : `${tool.originalName} ${tool.name}`,
    title: tool.title ?? '',
    description: tool.description.slice(0, MAX_DESCRIPTION_TEXT),
    params: paramsText(tool.inputSchema),
    annotations: annotationsText(tool.annotations),
    server: about === undefined ? tool.server : `${tool.server} ${about.slice(0, MAX_SERVER_TEXT)}`,
  };
}

/** Parameter names and descriptions, nested object properties included, capped in length. */
export function paramsText(schema: unknown): string {
  const parts: string[] = [];
  let length = 0;
  const visit = (node: unknown, depth: number): void => {
    if (depth > 3 || length > MAX_PARAMS_TEXT || node === null || typeof node !== 'object') return;
    const properties = (node as { properties?: unknown }).properties;
    if (properties === null || typeof properties !== 'object') return;
    for (const [name, property] of Object.entries(properties as Record<string, unknown>)) {
      parts.push(name);
      length += name.length;
      const description = (property as { description?: unknown } | null)?.description;
      if (typeof description === 'string') {
        parts.push(description);
        length += description.length;
      }
      visit(property, depth + 1);
      visit((property as { items?: unknown } | null)?.items, depth + 1);
    }
  };
  visit(schema, 0);
  return parts.join(' ').slice(0, MAX_PARAMS_TEXT);
}

/**
 * The annotations as words: their `title`, and each hint that is set said as what it means
 * ("read only", "destructive", …), so "delete" or "read-only" in a query can lean on them.
 */
function annotationsText(annotations: BridgedTool['annotations']): string {
  if (annotations === undefined) return '';
  const words: string[] = [];
  if (typeof annotations.title === 'string') words.push(annotations.title);
  if (annotations.readOnlyHint === true) words.push('read only');
  if (annotations.destructiveHint === true && annotations.readOnlyHint !== true) words.push('destructive');
  if (annotations.idempotentHint === true) words.push('idempotent');
  if (annotations.openWorldHint === true) words.push('external');
  return words.join(' ');
}
