import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import { ERROR_META_KEY } from '../../upstream/catalogue/tool-bridge.js';
import type { ScriptHost } from './script-sandbox.js';

/** A tool's `isError` answer inside a script: thrown there as an error with the tool's code. */
export class ToolCallError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'ToolCallError';
    this.code = code;
  }
}

export interface ScriptHostDeps {
  /** One inner tool call through the gateway's one request path (`gateway.call`), with the run's id. */
  call(name: string, args: Record<string, unknown> | undefined, signal: AbortSignal): Promise<CallToolResult>;
  /** The caller's view searched (catalogue-mode.ts). */
  search(query: string): Promise<Tool[]>;
  /** The caller's view. */
  tools(): Tool[];
}

/** The most matches `tools.search` answers a script. */
const SEARCH_LIMIT = 10;

/**
 * What a script reaches (issue #39 item 3): `tools.call` answers the tool's value — its
 * `structuredContent`, else its text (parsed when it is JSON) — and throws its error; `tools.search`
 * the best matches of the caller's view; `tools.list()` the view's names and descriptions.
 */
export function scriptHost(deps: ScriptHostDeps): ScriptHost {
  return {
    tools: deps.tools().map((tool) => ({ name: tool.name, ...(tool.description !== undefined ? { description: tool.description } : {}) })),
    call: async (name, args, signal) => valueOf(await deps.call(name, args, signal)),
    search: async (query) => (await deps.search(query)).slice(0, SEARCH_LIMIT).map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
  };
}

/** A tool result as a script sees it. */
export function valueOf(result: CallToolResult): unknown {
  const content = Array.isArray(result.content) ? result.content : [];
  const texts = content.flatMap((item) => (item.type === 'text' ? [item.text] : []));
  if (result.isError === true) {
    const meta = result._meta as Record<string, { code?: unknown } | undefined> | undefined;
    const code = meta?.[ERROR_META_KEY]?.code;
    throw new ToolCallError(typeof code === 'string' ? code : 'TOOL_ERROR', texts.join('\n') || 'The tool failed');
  }
  if (result.structuredContent !== undefined) return result.structuredContent;
  if (texts.length !== content.length) return content;
  const text = texts.join('\n');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
