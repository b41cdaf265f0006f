import type { ToolCatalogue } from '../../upstream/catalogue/tool-catalogue.js';
import type { BridgedTool } from '../../upstream/catalogue/tool-bridge.js';
import type { ToolVectors } from '../../upstream/catalogue/tool-vectors.js';
import { TopK } from '../../upstream/catalogue/top-k.js';
import type { ToolRanking, ToolSearchQuery } from './search-ranking.js';

export interface HybridSettings {
  /** The cosine's share of the score; BM25, scaled to the best lexical match, has the rest. */
  weight: number;
  /** How long a search waits for its query's vector. */
  timeoutMs: number;
}

/** Lexical matches scored beyond the limit, so a tool near in meaning keeps its word score too. */
const LEXICAL_DEPTH = 50;
/** How a server is scored from its tools: the best, and the next two at this weight. */
const SERVER_TAIL_WEIGHT = 0.3;

/**
 * Ranking by words and meaning (issue #37 item 3): the lexical ranking, and the tools nearest the
 * query's vector, scored together as (1 − weight) × BM25 / best BM25 + weight × cosine. Without a
 * query vector in time (endpoint down, slow, or failing) the lexical ranking is the answer, never
 * an error; the failure shows in `/status`.
 */
export function hybridSearcher(
  lexical: (query: string, options: ToolSearchQuery) => ToolRanking,
  catalogue: () => ToolCatalogue,
  vectors: ToolVectors,
  settings: HybridSettings,
): (query: string, options: ToolSearchQuery) => Promise<ToolRanking> {
  return async (query, options) => {
    const words = lexical(query, { ...options, limit: options.limit + LEXICAL_DEPTH });
    // Each search also nudges the background: new tools get their vectors soon after.
    void vectors.refresh();
    let vector: Float32Array;
    try {
      vector = await vectors.embedQuery(query, settings.timeoutMs);
    } catch {
      return { tools: words.tools.slice(0, options.limit), servers: words.servers };
    }
    const { weight } = settings;
    const near = new TopK<BridgedTool>(options.limit);
    for (const tool of catalogue().list()) {
      if ((options.server !== undefined && tool.server !== options.server) || (options.allows && !options.allows(tool))) continue;
      const similarity = vectors.similarity(vector, tool);
      if (similarity > 0) near.offer(similarity, tool);
    }
    const best = words.tools[0]?.score ?? 0;
    const scores = new Map<BridgedTool, number>();
    for (const hit of words.tools) scores.set(hit.tool, (1 - weight) * (best > 0 ? hit.score / best : 0) + weight * Math.max(0, vectors.similarity(vector, hit.tool)));
    for (const tool of near.sorted()) if (!scores.has(tool)) scores.set(tool, weight * vectors.similarity(vector, tool));
    const tools = [...scores]
      .map(([tool, score]) => ({ tool, score }))
      .sort((x, y) => y.score - x.score)
      .slice(0, options.limit);
    return { tools, servers: serversOf(tools) };
  };
}

/** Servers by their best tools, best first. */
function serversOf(tools: ReadonlyArray<{ tool: BridgedTool; score: number }>): ToolRanking['servers'] {
  const tops = new Map<string, number[]>();
  for (const { tool, score } of tools) {
    const top = tops.get(tool.server) ?? [];
    if (top.length < 3) top.push(score);
    tops.set(tool.server, top);
  }
  return [...tops].map(([server, [first = 0, second = 0, third = 0]]) => ({ server, score: first + SERVER_TAIL_WEIGHT * (second + third) })).sort((x, y) => y.score - x.score);
}
