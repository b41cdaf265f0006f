import type { Approvals } from '../../approvals/approvals.js';
import type { RequestContext, RequestResult, Stage } from '../pipeline.js';

/**
 * Calls to `requireApproval` tools wait for an operator's yes or no (approvals.ts). The router
 * asks the hold once the call is routed and before it is sent, so the hold sees the tool it
 * resolved to; the caller's agent goes with it (its own `requireApproval` globs join the server's).
 */
export function approvalHold(approvals: Pick<Approvals, 'hold'>): Stage {
  return (ctx: RequestContext, next: () => Promise<RequestResult>): Promise<RequestResult> => {
    if (ctx.request.method !== 'tools/call') return next();
    const { agent, onProgress } = ctx.options;
    // Set by the in-flight stage, which comes before this one: a held call is cancelled with the request.
    const signal = ctx.signal ?? new AbortController().signal;
    ctx.hold = (target) => approvals.hold(target, { agent, signal, onProgress });
    return next();
  };
}
