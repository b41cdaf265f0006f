import type { ClientCapabilities } from '@modelcontextprotocol/client';
import type { ApprovalPrompt, Approvals, HoldOptions } from '../../approvals/approvals.js';
import type { RequestContext, RequestResult, Stage } from '../pipeline.js';

/**
 * Calls that need approval wait for a yes or no (approvals.ts). The router asks the hold once the
 * call is routed and before it is sent, so the hold sees the tool it resolved to; the caller's
 * agent goes with it (its own `requireApproval` globs join the server's), and so does the policy
 * rule that asked for the approval, if one did (`ctx.approvalRule`, read when the hold is asked).
 * A 2026-07-28 caller that can be asked the configured prompt is not kept waiting
 * (`HoldOptions.ask`); any other caller is held as before.
 */
export function approvalHold(approvals: Pick<Approvals, 'hold' | 'prompt'>): Stage {
  return (ctx: RequestContext, next: () => Promise<RequestResult>): Promise<RequestResult> => {
    if (ctx.request.method !== 'tools/call') return next();
    const { agent, onProgress, caller, approvalAnswer } = ctx.options;
    // Set by the in-flight stage, which comes before this one: a held call is cancelled with the request.
    const signal = ctx.signal ?? new AbortController().signal;
    ctx.hold = (target) => {
      const prompt = caller?.takesInputRequired ? promptFor(caller.capabilities, approvals.prompt) : undefined;
      const options: HoldOptions = {
        agent,
        signal,
        onProgress,
        ...(ctx.approvalRule !== undefined ? { rule: ctx.approvalRule } : {}),
        ...(prompt ? { ask: { prompt, ...(approvalAnswer !== undefined ? { answer: approvalAnswer } : {}) } } : {}),
      };
      return approvals.hold(target, options);
    };
    return next();
  };
}

/**
 * How a caller that takes `input_required` can be asked: the configured prompt when it declared
 * that mode of elicitation (an empty `elicitation: {}` is the form mode), a link when the operator
 * asked for a form but the caller takes only links (the operator decides then), else undefined —
 * the call is held as a 2025 caller's is.
 */
export function promptFor(capabilities: ClientCapabilities | undefined, configured: ApprovalPrompt): ApprovalPrompt | undefined {
  const elicitation = capabilities?.elicitation as { form?: object; url?: object } | undefined;
  if (!elicitation) return undefined;
  const url = elicitation.url !== undefined;
  const form = elicitation.form !== undefined || !url;
  if (configured === 'form' && form) return 'form';
  return url ? 'url' : undefined;
}
