import type { AuditQuery, StoredAuditEntry } from '../../store/access-ports.js';
import type { ToolRanking } from './search-ranking.js';

/**
 * Ranking that learns from use (issue #37 item 4): per agent, the tools it called recently (read
 * from the audit once, then followed from each finished call) and its pinned tools lift their
 * score by a bounded share — a boost reorders matches, it never makes a match of a tool the words
 * did not find. A search whose returned tool (a match or a name in the map) the agent then calls
 * counts as a hit.
 */

/** The most a tool's score is lifted for recent calls (× (1 + this)). */
export const MAX_RECENT_BOOST = 0.2;
/** What a pinned tool's score is lifted by. */
export const PINNED_BOOST = 0.1;
/** Calls at which the recent-call boost is full. */
const FULL_AT = 5;
/** How fast a call's weight fades: it halves every this many ms (a week). */
const HALF_LIFE_MS = 7 * 24 * 3_600_000;
/** Calls remembered per agent. */
const RECENT = 100;
/** How long after a search a call of one of its tools counts as its hit. */
const HIT_WINDOW_MS = 10 * 60_000;

interface Use {
  count: number;
  last: number;
}

interface AgentUse {
  tools: Map<string, Use>;
  /** The audit's recent calls, read once. */
  seeded: Promise<void>;
  /** The last search's returned tools, until a call of one is a hit or the window closes. */
  lastSearch?: { names: Set<string>; at: number };
}

export interface ConversionCounts {
  /** Searches answered to agents. */
  searches: number;
  /** Searches followed within 10 minutes by a call of a tool they returned. */
  hits: number;
}

export class UsageBoost {
  private readonly agents = new Map<string, AgentUse>();
  private readonly counts: ConversionCounts = { searches: 0, hits: 0 };

  constructor(
    private readonly audit: { query(query: AuditQuery): Promise<StoredAuditEntry[]> } | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** The ranking with `agent`'s recent and pinned tools lifted, best first again. */
  async rerank(agent: string, ranking: ToolRanking, pinned: (name: string) => boolean): Promise<ToolRanking> {
    const use = this.useOf(agent);
    await use.seeded;
    const now = this.now();
    const tools = ranking.tools.map((hit) => ({ tool: hit.tool, score: hit.score * (1 + this.boost(use, hit.tool.name, now) + (pinned(hit.tool.name) ? PINNED_BOOST : 0)) }));
    // A stable sort: ties keep the words' order.
    tools.sort((x, y) => y.score - x.score);
    return { tools, servers: ranking.servers };
  }

  /** Notes what a search returned to `agent`, for its hit. */
  answered(agent: string, names: Iterable<string>): void {
    this.counts.searches++;
    this.useOf(agent).lastSearch = { names: new Set(names), at: this.now() };
  }

  /** A finished tool call of `agent`: remembered when it succeeded, and a hit of its last search if that returned it. */
  called(agent: string, name: string, ok: boolean): void {
    const use = this.useOf(agent);
    const now = this.now();
    if (ok) remember(use.tools, name, now);
    const search = use.lastSearch;
    if (search && now - search.at <= HIT_WINDOW_MS && search.names.has(name)) {
      this.counts.hits++;
      delete use.lastSearch;
    }
  }

  conversions(): ConversionCounts {
    return { ...this.counts };
  }

  /** 0 … MAX_RECENT_BOOST: more calls and more recent ones lift more. */
  private boost(use: AgentUse, name: string, now: number): number {
    const known = use.tools.get(name);
    if (!known) return 0;
    const fade = 0.5 ** (Math.max(0, now - known.last) / HALF_LIFE_MS);
    return MAX_RECENT_BOOST * Math.min(1, known.count / FULL_AT) * fade;
  }

  private useOf(agent: string): AgentUse {
    let use = this.agents.get(agent);
    if (!use) {
      const tools = new Map<string, Use>();
      use = { tools, seeded: this.seed(agent, tools) };
      this.agents.set(agent, use);
    }
    return use;
  }

  /** The agent's recent successful tool calls from the audit, oldest first (a store never rejects). */
  private async seed(agent: string, tools: Map<string, Use>): Promise<void> {
    if (!this.audit) return;
    const entries = await this.audit.query({ agent, outcome: 'ok', limit: RECENT });
    for (const entry of [...entries].reverse()) if (entry.kind === 'tools/call') remember(tools, entry.name, entry.ts);
  }
}

/** Counts a call of `name`, keeping the `RECENT` most recently called tools. */
function remember(tools: Map<string, Use>, name: string, at: number): void {
  const known = tools.get(name);
  tools.delete(name);
  tools.set(name, { count: (known?.count ?? 0) + 1, last: Math.max(known?.last ?? 0, at) });
  if (tools.size > RECENT) tools.delete(tools.keys().next().value as string);
}
