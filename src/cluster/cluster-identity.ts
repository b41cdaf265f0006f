import { randomUUID } from 'node:crypto';
import { mintOperatorKey } from '../gateway/agents/agent-keys.js';

/**
 * What a cluster's replicas hold in common beyond the data (issue #43 items 4–5), each claimed
 * once in the shared state store: the first replica's value wins, and replicas starting at the
 * same moment get that same value (`claim` is one insert-or-keep under the row's lock).
 * - **The cluster id**: every replica advertises it to the Switchboards it links to, so loop
 *   detection knows a replica of its own cluster (upstream/instance.ts) — each replica keeps an
 *   instance id of its own.
 * - **The operator key** of a cluster without a `token`: one key every replica accepts, instead of
 *   an `operator.key` per machine. It is kept in clear, as the sealing key is: whoever reads the
 *   database holds the cluster anyway. Each replica also writes it beside its own database for the
 *   CLI on that machine.
 */

export const CLUSTER_ID_STATE = 'cluster.id';
export const OPERATOR_KEY_STATE = 'cluster.operator-key';

export interface ClusterIdentity {
  clusterId: string;
  /** The cluster's operator key; absent when the config sets a `token` (that is the key then). */
  operatorKey?: string;
}

export async function claimClusterIdentity(state: { claim(key: string, value: string): Promise<string> }, options: { token?: string | undefined }): Promise<ClusterIdentity> {
  const clusterId = await state.claim(CLUSTER_ID_STATE, randomUUID());
  if (options.token !== undefined) return { clusterId };
  return { clusterId, operatorKey: await state.claim(OPERATOR_KEY_STATE, mintOperatorKey()) };
}
