import { askReplicas } from '../cluster/ask-replicas.js';
import type { PendingApproval } from '../gateway/index.js';

export { wasForwarded } from '../cluster/forward-request.js';

/** What `GET /approvals` needs of a replica's cluster (issue #43 item 2). */
export interface ClusterApprovals {
  replicaId: string;
  sealKey: Buffer;
  replicas(): Promise<Array<{ id: string; url: string; live: boolean; self: boolean }>>;
}

/** A held call as a cluster lists it: with the replica holding it (where a decision is forwarded). */
export type ClusterApproval = PendingApproval & { replica: string };

/**
 * Every replica's held calls, oldest first: this one's and those of each other live replica,
 * asked with the operator's own key. A replica that did not answer is in `unansweredReplicas`.
 */
export async function listEverywhere(
  cluster: ClusterApprovals,
  own: readonly PendingApproval[],
  authorization: string | undefined,
): Promise<{ approvals: ClusterApproval[]; unansweredReplicas?: string[] }> {
  const others = (await cluster.replicas()).filter((r) => r.live && !r.self && r.id !== cluster.replicaId);
  const { answers, unanswered } = await askReplicas<{ approvals?: ClusterApproval[] }>(
    others,
    { path: '/approvals', authorization },
    { id: cluster.replicaId, sealKey: cluster.sealKey },
  );
  const approvals: ClusterApproval[] = own.map((a) => ({ ...a, replica: cluster.replicaId }));
  for (const { replica, body } of answers) for (const held of body.approvals ?? []) approvals.push({ ...held, replica });
  approvals.sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
  return unanswered.length > 0 ? { approvals, unansweredReplicas: unanswered } : { approvals };
}
