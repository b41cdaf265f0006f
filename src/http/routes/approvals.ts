import type { FastifyPluginCallback } from 'fastify';
import { SwitchboardError } from '../../errors.js';
import type { Approvals } from '../../gateway/index.js';
import { ApprovalParamsSchema, EmptyBodySchema, parseInput } from '../schemas.js';

export interface ApprovalRoutesOptions {
  /** Absent in an app built without approvals: nothing is ever pending. */
  approvals?: Pick<Approvals, 'list' | 'decide'>;
}

/**
 * The operator's side of `requireApproval` (issue #22 item 7): the calls waiting now, and the
 * answer to one. A decided, timed-out or withdrawn id is `404 APPROVAL_NOT_FOUND`.
 */
export const approvalRoutes: FastifyPluginCallback<ApprovalRoutesOptions> = (app, { approvals }, done) => {
  app.get('/approvals', async () => ({ approvals: approvals?.list() ?? [] }));

  for (const [verb, outcome] of [['approve', 'approved'], ['deny', 'denied']] as const) {
    app.post(`/approvals/:id/${verb}`, async (request) => {
      const { id } = parseInput(ApprovalParamsSchema, request.params, 'params');
      parseInput(EmptyBodySchema, request.body, 'body');
      if (!approvals) throw new SwitchboardError('APPROVAL_NOT_FOUND', `No pending approval "${id}"`);
      return { approval: approvals.decide(id, outcome) };
    });
  }

  done();
};
