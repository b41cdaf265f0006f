import type { MCPManager } from '../../mcp/manager.js';
import { CatalogueModes, type CatalogueModeSettings, type ToolSearcher } from './catalogue-mode.js';
import { Continuations } from './continuations.js';
import { McpLists } from './mcp-lists.js';
import { RelayStates } from './relay-state.js';

/** What every `/mcp` server of one app shares: the lists, parked calls, relay states and modes. */
export interface ServerParts {
  lists: McpLists;
  continuations: Continuations;
  relayStates: RelayStates;
  modes: CatalogueModes;
}

/** Catalogue settings with the searcher optional: without one, `search_tools` matches substrings. */
export type CatalogueOptions = Omit<CatalogueModeSettings, 'searcher'> & { searcher?: ToolSearcher };

export function createServerParts(manager: Pick<MCPManager, 'getCatalogue' | 'getPrompts' | 'getResources' | 'identity'>, catalogue: CatalogueOptions = {}): ServerParts {
  const lists = new McpLists(manager);
  const searcher = catalogue.searcher ?? substringSearcher(manager);
  return { lists, continuations: new Continuations(), relayStates: new RelayStates(), modes: new CatalogueModes(lists, manager, { ...catalogue, searcher }) };
}

/**
 * The stand-in search until the ranked index (issue #23 item 1) is injected: the tools whose name
 * or description contains a word of the query, the most words first. `GET /tools?q=` matches so too.
 */
export function substringSearcher(manager: Pick<MCPManager, 'getCatalogue'>): ToolSearcher {
  return (query, { limit, server, allows }) => {
    const words = query.toLowerCase().split(/\W+/).filter((word) => word.length > 0);
    const hits = [];
    for (const tool of manager.getCatalogue().list()) {
      if ((server !== undefined && tool.server !== server) || (allows && !allows(tool))) continue;
      const text = `${tool.name} ${tool.title ?? ''} ${tool.description}`.toLowerCase();
      const score = words.filter((word) => text.includes(word)).length;
      if (score > 0) hits.push({ tool, score });
    }
    return hits.sort((a, b) => b.score - a.score).slice(0, limit);
  };
}
