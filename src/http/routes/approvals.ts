import type { FastifyPluginCallback } from 'fastify';
import { SwitchboardError } from '../../errors.js';
import type { Approvals } from '../../gateway/index.js';
import { ApprovalParamsSchema, ApproveBodySchema, EmptyBodySchema, parseInput } from '../schemas.js';
import { listEverywhere, wasForwarded, type ClusterApprovals } from '../cluster-approvals.js';

export interface ApprovalRoutesOptions {
  /** Absent in an app built without approvals: nothing is ever pending. */
  approvals?: Pick<Approvals, 'list' | 'decide'>;
  /** In a cluster, every replica's held calls are listed (issue #43 item 2). @default this daemon's only */
  cluster?: ClusterApprovals;
}

/**
 * The operator's side of `requireApproval` (issue #22 item 7): the calls waiting now, and the
 * answer to one — for that call only, or with `forMs` for every identical call (agent, tool,
 * arguments digest) that long (issue #40 item 3). A decided, timed-out or withdrawn id is
 * `404 APPROVAL_NOT_FOUND`.
 */
export const approvalRoutes: FastifyPluginCallback<ApprovalRoutesOptions> = (app, { approvals, cluster }, done) => {
  app.get('/approvals', async (request) => {
    const own = approvals?.list() ?? [];
    // A replica asked by another answers for itself: the asking one gathers.
    if (!cluster || wasForwarded(request)) return { approvals: cluster ? own.map((a) => ({ ...a, replica: cluster.replicaId })) : own };
    return listEverywhere(cluster, own, request.headers.authorization);
  });

  app.post('/approvals/:id/approve', async (request) => {
    const { id } = parseInput(ApprovalParamsSchema, request.params, 'params');
    const body = parseInput(ApproveBodySchema, request.body, 'body');
    if (!approvals) throw new SwitchboardError('APPROVAL_NOT_FOUND', `No pending approval "${id}"`);
    return { approval: approvals.decide(id, 'approved', { forMs: body?.forMs }) };
  });

  app.post('/approvals/:id/deny', async (request) => {
    const { id } = parseInput(ApprovalParamsSchema, request.params, 'params');
    parseInput(EmptyBodySchema, request.body, 'body');
    if (!approvals) throw new SwitchboardError('APPROVAL_NOT_FOUND', `No pending approval "${id}"`);
    return { approval: approvals.decide(id, 'denied') };
  });

  done();
};
