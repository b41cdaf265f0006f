/**
 * Scores whole `search_tools` answers on the query sets (issue #37 item 1): how often a right tool
 * is named anywhere in the answer (a ranked match, or the neighbourhood map), and the answer's
 * size. The answer is built as the daemon builds it: the ranking of `ToolSearch`, the matches as
 * `tools/list` defines them, `buildAnswer` within the byte budget.
 */
import { DEFAULT_ANSWER_BYTES } from '../../src/config/search-schema.js';
import { buildAnswer, DEFAULT_SHAPE, type AnswerShape } from '../../src/gateway/lists/search-answer.js';
import { NEXT_CANDIDATES } from '../../src/gateway/lists/search-ranking.js';
import { toMcpTool } from '../../src/upstream/catalogue/tool-bridge.js';
import type { ToolCatalogue } from '../../src/upstream/catalogue/tool-catalogue.js';
import type { ToolSearch } from '../../src/upstream/catalogue/tool-search.js';
import type { Query } from './evaluate.js';

export interface AnswerScores {
  /** Share of queries with a right tool named anywhere in the answer. */
  namedInAnswer: number;
  /** Share with a right tool among the ranked matches (with schemas). */
  inMatches: number;
  medianBytes: number;
  p90Bytes: number;
  n: number;
}

export function evaluateAnswers(
  catalogue: ToolCatalogue,
  index: ToolSearch,
  queries: readonly Query[],
  limit = 5,
  budget = DEFAULT_ANSWER_BYTES,
  shape: AnswerShape = DEFAULT_SHAPE,
): AnswerScores {
  let named = 0;
  let inMatches = 0;
  const sizes: number[] = [];
  for (const q of queries) {
    const ranking = index.rank(q.query, { limit: limit + NEXT_CANDIDATES });
    const answer = buildAnswer({
      matches: ranking.tools.slice(0, limit).map((hit) => toMcpTool(hit.tool)),
      matchTools: ranking.tools.slice(0, limit).map((hit) => hit.tool),
      next: ranking.tools.slice(limit).map((hit) => hit.tool),
      servers: ranking.servers.map((s) => s.server),
      toolsOf: (server) => catalogue.itemsOf(server),
      allServers: [...new Set(catalogue.runs().map((run) => run.server))],
      budget,
      shape,
    });
    sizes.push(Buffer.byteLength(JSON.stringify({ tools: answer.tools, related: answer.related })));
    const expected = new Set(q.expected);
    const key = (name: string): string | undefined => {
      const tool = catalogue.get(name);
      return tool ? `${tool.server}/${tool.originalName}` : undefined;
    };
    const matchNames = answer.tools.map((tool) => key(tool.name));
    const mapNames = answer.related.flatMap((group) => [...group.tools.map((t) => t.name), ...group.names]).map(key);
    if (matchNames.some((name) => name !== undefined && expected.has(name))) inMatches++;
    if ([...matchNames, ...mapNames].some((name) => name !== undefined && expected.has(name))) named++;
  }
  sizes.sort((a, b) => a - b);
  const at = (p: number): number => sizes[Math.min(sizes.length - 1, Math.floor((p / 100) * sizes.length))] ?? 0;
  return { namedInAnswer: named / queries.length, inMatches: inMatches / queries.length, medianBytes: at(50), p90Bytes: at(90), n: queries.length };
}
