import { ownedId } from '../../util/replica-id.js';
import type { CatalogueModes, McpLists } from '../../gateway/index.js';
import { Continuations } from './continuations.js';
import { RelayStates } from './relay-state.js';

/** What every `/mcp` server of one app shares: the gateway's lists and modes, and this endpoint's parked calls and relay states. */
export interface ServerParts {
  lists: McpLists;
  continuations: Continuations;
  relayStates: RelayStates;
  modes: CatalogueModes;
}

/** A replica's place in a cluster (issue #28): what its tokens are prefixed with, the key all replicas seal with. */
export interface ClusterParts {
  replicaId: string;
  sealKey: Buffer;
}

export function createServerParts(gateway: { readonly lists: McpLists; readonly modes: CatalogueModes }, cluster?: ClusterParts): ServerParts {
  return {
    lists: gateway.lists,
    modes: gateway.modes,
    continuations: new Continuations(undefined, undefined, cluster ? ownedId(cluster.replicaId, '') : ''),
    relayStates: new RelayStates(undefined, undefined, cluster?.sealKey),
  };
}
