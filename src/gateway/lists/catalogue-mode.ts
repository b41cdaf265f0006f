import type { Tool } from '@modelcontextprotocol/server';
import type { BridgedTool } from '../../upstream/catalogue/tool-bridge.js';
import type { MCPManager } from '../../upstream/manager.js';
import { globMatcher } from '../../util/glob-matcher.js';
import type { AgentRef } from '../agents/agent-ref.js';
import type { McpLists } from './agent-lists.js';
import { META_TOOLS, READ_RESULT, READ_RESULT_TOOL, RUN_SCRIPT, RUN_SCRIPT_TOOL, isMetaToolName } from './meta-tool-defs.js';
import { answerSearch, type SearchAnswer, type ToolSearcher } from './search-ranking.js';
import type { SearchStats } from './search-stats.js';
import type { UsageBoost } from './usage-boost.js';

/** How `/mcp` presents the tool catalogue (SPEC §13). */
export type CatalogueMode = 'full' | 'search' | 'auto';

export type { ToolSearchQuery, ToolSearcher } from './search-ranking.js';

export interface CatalogueModeSettings {
  /** @default "auto" */
  mode?: CatalogueMode;
  /** `auto` lists the catalogue up to this many tools in the caller's view, the meta-tools above. @default 40 */
  searchAbove?: number;
  /** Tools listed beside the meta-tools, as globs over exposed names. @default [] */
  pinned?: readonly string[];
  /** An agent's own `catalogue` and `pinned`, read per request (they win over the daemon's). */
  agentSettings?: (name: string) => { catalogue?: CatalogueMode; pinned?: readonly string[] } | undefined;
  /** The index behind `search_tools`. */
  searcher: ToolSearcher;
  /** Whether a caller has a result kept under a handle: `read_result` is listed to it then, in every mode (issue #38). @default never */
  hasKeptResults?: (agent: AgentRef | undefined) => boolean;
  /** The byte budget of a search answer (matches and map). @default 12288 */
  answerBytes?: number;
  /** What a server says of itself, shown beside its name in the map. */
  aboutServer?: (server: string) => string | undefined;
  /** An agent's recent calls and pinned tools lift their rank; its searches' hits are counted (issue #37). */
  usage?: UsageBoost;
  /** What searches found, for `GET /search/stats` and `/metrics`. */
  stats?: SearchStats;
  /** Whether code mode is on for a caller: `run_script` is listed to it then, in every mode (issue #39). @default never */
  hasCodeMode?: (agent: AgentRef | undefined) => boolean;
}

interface ByName {
  version: number;
  tools: Map<string, Tool>;
}

interface SearchList {
  version: number;
  list: Tool[];
}

/**
 * Which list a caller of `/mcp` gets, and the lookups of the meta-tools. The mode is decided per
 * request: `auto` compares the size of the caller's view now with `searchAbove`, so a view that
 * grows past it lists the meta-tools from its next `tools/list` on (its `list_changed` is sent
 * anyway: the view's list changed). Lists are cached per catalogue version × view, as in McpLists.
 */
export class CatalogueModes {
  private readonly byName = new Map<string, ByName>();
  private readonly searchLists = new Map<string, SearchList>();

  constructor(
    private readonly lists: Pick<McpLists, 'tools'>,
    private readonly manager: Pick<MCPManager, 'getCatalogue'>,
    private readonly settings: CatalogueModeSettings,
  ) {}

  /** The mode in force for `agent` (absent: the operator, or a daemon without keys) right now. */
  modeOf(agent: AgentRef | undefined): 'full' | 'search' {
    const own = agent ? this.settings.agentSettings?.(agent.name) : undefined;
    const mode = own?.catalogue ?? this.settings.mode ?? 'auto';
    if (mode !== 'auto') return mode;
    return this.lists.tools(agent?.view).length > (this.settings.searchAbove ?? 40) ? 'search' : 'full';
  }

  /** What `tools/list` holds for `agent`: the catalogue (its view), or the meta-tools and the pinned tools. */
  tools(agent: AgentRef | undefined): Tool[] {
    const listed = this.listed(agent);
    const extra = [...(this.settings.hasKeptResults?.(agent) === true ? [READ_RESULT_TOOL] : []), ...(this.settings.hasCodeMode?.(agent) === true ? [RUN_SCRIPT_TOOL] : [])];
    return extra.length === 0 ? listed : [...listed, ...extra];
  }

  private listed(agent: AgentRef | undefined): Tool[] {
    if (this.modeOf(agent) === 'full') return this.lists.tools(agent?.view);
    const pinned = this.pinnedOf(agent);
    const key = `${agent?.view?.key ?? '*'}\u0000${JSON.stringify(pinned)}`;
    const version = this.manager.getCatalogue().version;
    let entry = this.searchLists.get(key);
    if (entry?.version !== version) {
      const matches = globMatcher(pinned);
      // A catalogue tool named like a meta-tool is shadowed by it in this mode (call_tool reaches it).
      const kept = pinned.length === 0 ? [] : this.lists.tools(agent?.view).filter((tool) => matches(tool.name) && !isMetaToolName(tool.name));
      entry = { version, list: [...META_TOOLS, ...kept] };
      this.searchLists.set(key, entry);
    }
    return entry.list;
  }

  /**
   * Whether a `tools/call` of `name` is a meta-tool's: always in `search` mode (the meta-tool wins
   * over a catalogue tool of the same name); in `full` mode only when the caller's view has no
   * tool of that name, so an agent that learned the meta-tools before `auto` switched back keeps going.
   */
  isMetaCall(name: string, agent: AgentRef | undefined): boolean {
    if (!isMetaToolName(name)) return false;
    // read_result is the meta-tool whenever the caller has no catalogue tool of that name.
    if (name === READ_RESULT || name === RUN_SCRIPT) return this.definition(name, agent) === undefined;
    return this.modeOf(agent) === 'search' || this.definition(name, agent) === undefined;
  }

  /** The definition of `name` exactly as the full list shows it to `agent`; undefined outside its view. */
  definition(name: string, agent: AgentRef | undefined): Tool | undefined {
    const view = agent?.view;
    const version = this.manager.getCatalogue().version;
    const key = view?.key ?? '*';
    let entry = this.byName.get(key);
    if (entry?.version !== version) {
      entry = { version, tools: new Map(this.lists.tools(view).map((tool) => [tool.name, tool])) };
      this.byName.set(key, entry);
    }
    return entry.tools.get(name);
  }

  /**
   * The best matches for `query` in `agent`'s view, as the full list defines them, and the map of
   * the other likely tools (issue #37): what `search_tools` answers.
   */
  search(query: string, limit: number, server: string | undefined, agent: AgentRef | undefined): Promise<SearchAnswer<Tool>> {
    return this.answer(query, limit, server, agent, (hit) => this.definition(hit.tool.name, agent));
  }

  /** The same ranking and map with each match as `toRow` shows it (`GET /tools/search`). */
  async answer<T extends { name: string }>(
    query: string,
    limit: number,
    server: string | undefined,
    agent: AgentRef | undefined,
    toRow: (hit: { tool: BridgedTool; score: number }) => T | undefined,
  ): Promise<SearchAnswer<T>> {
    const view = agent?.view;
    const allows = view && !view.everything ? (tool: BridgedTool): boolean => view.allowsTool(tool) : undefined;
    const request = { query, limit, server, allows, budget: this.settings.answerBytes };
    const { usage, searcher, stats } = this.settings;
    const pinned = usage && agent ? globMatcher(this.pinnedOf(agent)) : undefined;
    const ranked: ToolSearcher = usage && agent && pinned ? async (text, options) => usage.rerank(agent.name, await searcher(text, options), pinned) : searcher;
    const answer = await answerSearch(
      ranked,
      request,
      toRow,
      (name) => this.manager.getCatalogue().itemsOf(name),
      this.settings.aboutServer,
      () => [
        ...new Set(
          this.manager
            .getCatalogue()
            .runs()
            .map((run) => run.server),
        ),
      ],
    );
    const names = [...answer.tools.map((tool) => tool.name), ...answer.related.flatMap((group) => [...group.tools.map((tool) => tool.name), ...group.names])];
    if (usage && agent) usage.answered(agent.name, names);
    stats?.record(query, names, agent?.name);
    return answer;
  }

  private pinnedOf(agent: AgentRef | undefined): readonly string[] {
    const own = agent ? this.settings.agentSettings?.(agent.name)?.pinned : undefined;
    return own ?? this.settings.pinned ?? [];
  }
}
