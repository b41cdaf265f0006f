import { DEFAULT_ANSWER_BYTES } from '../../config/search-schema.js';
import type { BridgedTool } from '../../upstream/catalogue/tool-bridge.js';
import { buildAnswer, type RelatedServer } from './search-answer.js';

/** How many tools past the matches a search ranks for the neighbourhood map (`search-answer.ts`). */
export const NEXT_CANDIDATES = 200;

export interface ToolSearchQuery {
  limit: number;
  server?: string;
  /** Only tools it allows are returned (the caller's view). */
  allows?: (tool: BridgedTool) => boolean;
}

/** A search's ranking: the best tools and the servers with a match, best first. */
export interface ToolRanking {
  tools: Array<{ tool: BridgedTool; score: number }>;
  servers: Array<{ server: string; score: number }>;
}

/** The ranked index `search_tools` and `GET /tools/search` answer from (async when it asks an embeddings endpoint). */
export type ToolSearcher = (query: string, options: ToolSearchQuery) => ToolRanking | Promise<ToolRanking>;

/** What a search answers: the matches as the caller sees them, and the map of the rest. */
export interface SearchAnswer<T> {
  tools: T[];
  related: RelatedServer[];
}

export interface SearchRequest {
  query: string;
  limit: number;
  server?: string | undefined;
  /** The caller's view; absent: everything. */
  allows?: ((tool: BridgedTool) => boolean) | undefined;
  /** @default 12288 */
  budget?: number | undefined;
}

/**
 * Ranks `request.query` and builds the answer (issue #37 item 1): the first `limit` hits as
 * `toMatch` shows them (a hit it refuses is left out), the map from the rest of the ranking and
 * the tools of its servers in the caller's view, within the byte budget.
 */
export async function answerSearch<T extends { name: string }>(
  searcher: ToolSearcher,
  request: SearchRequest,
  toMatch: (hit: { tool: BridgedTool; score: number }) => T | undefined,
  itemsOf: (server: string) => readonly BridgedTool[],
  aboutOf?: (server: string) => string | undefined,
  /** Every server of the catalogue, for the map's rest of the view (filtered to the caller's view by `itemsOf` and `allows`). */
  allServers?: () => readonly string[],
): Promise<SearchAnswer<T>> {
  const { query, limit, server, allows } = request;
  const ranking = await searcher(query, { limit: limit + NEXT_CANDIDATES, ...(server !== undefined ? { server } : {}), ...(allows ? { allows } : {}) });
  const matches: T[] = [];
  const matchTools: BridgedTool[] = [];
  let used = 0;
  for (const hit of ranking.tools) {
    if (matches.length === limit) break;
    used++;
    const match = toMatch(hit);
    if (!match) continue;
    matches.push(match);
    matchTools.push(hit.tool);
  }
  const { tools, related } = buildAnswer({
    matches,
    matchTools,
    next: ranking.tools.slice(used).map((hit) => hit.tool),
    servers: ranking.servers.map((entry) => entry.server),
    toolsOf: (name) => (allows ? itemsOf(name).filter(allows) : itemsOf(name)),
    ...(aboutOf ? { aboutOf } : {}),
    // A search kept to one server has no rest of the view, nor one that matched nothing.
    ...(allServers && server === undefined && matches.length > 0 ? { allServers: allServers() } : {}),
    budget: request.budget ?? DEFAULT_ANSWER_BYTES,
  });
  return { tools, related };
}
