import type { Tool } from '@modelcontextprotocol/client';
import { SwitchboardError } from '../errors.js';

/** Upper bound on `tools/list` pages, so a server that never stops paginating cannot hang a connect. @default 100 */
export const MAX_TOOL_PAGES = 100;

export interface ToolPage {
  tools: Tool[];
  nextCursor?: string;
  _meta?: Record<string, unknown>;
}

/** A server's whole tool list, and the `_meta` of its first page (e.g. a Switchboard's instance). */
export interface ToolListing {
  tools: Tool[];
  meta?: Record<string, unknown>;
}

/**
 * Follows `nextCursor` until a page has none (or an empty one) and returns every tool in order.
 * A cursor seen twice would loop forever, so it fails instead, as does passing `maxPages`.
 */
export async function collectToolPages(
  fetchPage: (cursor: string | undefined) => Promise<ToolPage>,
  maxPages = MAX_TOOL_PAGES,
): Promise<ToolListing> {
  const tools: Tool[] = [];
  let meta: Record<string, unknown> | undefined;
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    const result = await fetchPage(cursor);
    tools.push(...result.tools);
    if (page === 1) meta = result._meta;
    const next = result.nextCursor;
    if (next === undefined || next === '') return meta === undefined ? { tools } : { tools, meta };
    if (seen.has(next)) {
      throw new SwitchboardError(
        'UPSTREAM_CONNECT_FAILED',
        `tools/list returned the cursor ${JSON.stringify(next)} twice (page ${page}); refusing to loop`,
      );
    }
    if (page >= maxPages) {
      throw new SwitchboardError('UPSTREAM_CONNECT_FAILED', `tools/list returned more than ${maxPages} pages`);
    }
    seen.add(next);
    cursor = next;
  }
}
