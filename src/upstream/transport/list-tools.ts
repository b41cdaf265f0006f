import type { Tool } from '@modelcontextprotocol/client';
import { SwitchboardError } from '../../errors.js';
import type { ListHints } from '../../store/tool-cache-store.js';

/** The caching hints of a list result, when it has valid ones. */
export function hintsOf(result: { ttlMs?: unknown; cacheScope?: unknown }): ListHints | undefined {
  const hints: ListHints = {};
  if (typeof result.ttlMs === 'number' && Number.isFinite(result.ttlMs) && result.ttlMs >= 0) hints.ttlMs = result.ttlMs;
  if (result.cacheScope === 'public' || result.cacheScope === 'private') hints.cacheScope = result.cacheScope;
  return Object.keys(hints).length > 0 ? hints : undefined;
}

/** Upper bound on `tools/list` pages, so a server that never stops paginating cannot hang a connect. @default 100 */
export const MAX_TOOL_PAGES = 100;

export interface ToolPage {
  tools: Tool[];
  nextCursor?: string;
  _meta?: Record<string, unknown>;
  /** 2026-07-28 caching hints (SEP-2549). */
  ttlMs?: unknown;
  cacheScope?: unknown;
}

/**
 * A server's whole tool list, with the `_meta` of its first page (e.g. a Switchboard's instance)
 * and the caching hints a modern-era server sent with it.
 */
export interface ToolListing {
  tools: Tool[];
  meta?: Record<string, unknown>;
  hints?: ListHints;
}

/** One page of any list result (`tools`, `prompts`, `resources`, `resourceTemplates`). */
export type Page<K extends string, T> = { [key in K]: T[] } & {
  nextCursor?: string;
  _meta?: Record<string, unknown>;
  ttlMs?: unknown;
  cacheScope?: unknown;
};

/** A whole list, with the first page's `_meta` and caching hints. */
export interface Listing<T> {
  items: T[];
  meta?: Record<string, unknown>;
  hints?: ListHints;
}

/**
 * Follows `nextCursor` until a page has none (or an empty one) and returns every item of `key`
 * in order. A cursor seen twice would loop forever, so it fails instead, as does passing
 * `maxPages`.
 */
export async function collectPages<K extends string, T>(
  method: string,
  key: K,
  fetchPage: (cursor: string | undefined) => Promise<Page<K, T>>,
  maxPages = MAX_TOOL_PAGES,
): Promise<Listing<T>> {
  const items: T[] = [];
  let meta: Record<string, unknown> | undefined;
  let hints: ListHints | undefined;
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    const result = await fetchPage(cursor);
    items.push(...(result[key] as T[]));
    if (page === 1) {
      meta = result._meta;
      hints = hintsOf(result);
    }
    const next = result.nextCursor;
    if (next === undefined || next === '') return { items, ...(meta !== undefined ? { meta } : {}), ...(hints !== undefined ? { hints } : {}) };
    if (seen.has(next)) {
      throw new SwitchboardError('UPSTREAM_CONNECT_FAILED', `${method} returned the cursor ${JSON.stringify(next)} twice (page ${page}); refusing to loop`);
    }
    if (page >= maxPages) throw new SwitchboardError('UPSTREAM_CONNECT_FAILED', `${method} returned more than ${maxPages} pages`);
    seen.add(next);
    cursor = next;
  }
}

/** `collectPages` for `tools/list`. */
export async function collectToolPages(fetchPage: (cursor: string | undefined) => Promise<ToolPage>, maxPages = MAX_TOOL_PAGES): Promise<ToolListing> {
  const { items, ...rest } = await collectPages<'tools', Tool>('tools/list', 'tools', fetchPage, maxPages);
  return { tools: items, ...rest };
}
