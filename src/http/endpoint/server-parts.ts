import { ownedId } from '../../util/replica-id.js';
import type { MCPManager } from '../../upstream/manager.js';
import { CatalogueModes, type CatalogueModeSettings, type ToolSearcher } from '../../gateway/lists/catalogue-mode.js';
import { Continuations } from './continuations.js';
import { McpLists } from '../../gateway/lists/agent-lists.js';
import { RelayStates } from './relay-state.js';

/** What every `/mcp` server of one app shares: the lists, parked calls, relay states and modes. */
export interface ServerParts {
  lists: McpLists;
  continuations: Continuations;
  relayStates: RelayStates;
  modes: CatalogueModes;
}

/** Catalogue settings with the searcher optional: without one, `search_tools` uses the manager's ranked index. */
export type CatalogueOptions = Omit<CatalogueModeSettings, 'searcher'> & { searcher?: ToolSearcher };

/** A replica's place in a cluster (issue #28): what its tokens are prefixed with, the key all replicas seal with. */
export interface ClusterParts {
  replicaId: string;
  sealKey: Buffer;
}

export function createServerParts(
  manager: Pick<MCPManager, 'getCatalogue' | 'getPrompts' | 'getResources' | 'identity' | 'toolSearch'>,
  catalogue: CatalogueOptions = {},
  cluster?: ClusterParts,
): ServerParts {
  const lists = new McpLists(manager);
  const searcher = catalogue.searcher ?? ((query, options) => manager.toolSearch.search(query, options));
  return {
    lists,
    continuations: new Continuations(undefined, undefined, cluster ? ownedId(cluster.replicaId, '') : ''),
    relayStates: new RelayStates(undefined, undefined, cluster?.sealKey),
    modes: new CatalogueModes(lists, manager, { ...catalogue, searcher }),
  };
}
