import { SwitchboardError } from '../../../errors.js';
import type { Approvals } from '../../approvals/approvals.js';
import type { Policies } from '../../policies/policies.js';
import type { RequestContext, RequestResult, Stage } from '../pipeline.js';

const WHAT = { 'tools/call': 'call', 'prompts/get': 'prompt get', 'resources/read': 'read' } as const;

/**
 * Argument policies (issue #40): a tool call, prompt get or resource read — a script's inner
 * calls included, each a request of its own — is refused with `POLICY_DENIED` (naming the rule
 * and its reason, never the argument values), held for an operator (`approve`), or let through.
 * It runs after the startup wait, so a name listed late is judged once it is known. An `approve`
 * rule sets `ctx.approvalRule`: the approval stage's hold then holds the call and names the rule.
 */
export function policy(policies: Pick<Policies, 'empty' | 'decide'>, approvals: Pick<Approvals, 'hold'> | undefined): Stage {
  // Without the approval stage nothing could hold the call: an `approve` rule then refuses it.
  return (ctx: RequestContext, next: () => Promise<RequestResult>): Promise<RequestResult> => {
    const { request, options } = ctx;
    if (policies.empty) return next();
    if (request.method !== 'tools/call' && request.method !== 'prompts/get' && request.method !== 'resources/read') return next();
    const verdict = policies.decide(request, options.agent, options.transport);
    if (verdict.effect === 'allow') return next();
    // Only a tool call can wait for an operator: a prompt get or read an `approve` rule selects is refused, fail closed.
    if (verdict.effect === 'approve' && request.method === 'tools/call' && approvals) {
      // The approval stage's hold reads it when the router asks: the call is held, naming the rule.
      ctx.approvalRule = verdict.rule;
      return next();
    }
    const why = verdict.effect === 'approve' ? `${verdict.reason} (it needs an approval, which only a tool call can wait for)` : verdict.reason;
    return Promise.reject(new SwitchboardError('POLICY_DENIED', `Policy "${verdict.rule}" refused the ${WHAT[request.method]}: ${why}`));
  };
}
