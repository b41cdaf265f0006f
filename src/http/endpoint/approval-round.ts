import { inputRequired, type InputRequiredResult, type ServerContext } from '@modelcontextprotocol/server';
import type { ApprovalPending } from '../../gateway/index.js';

/**
 * A 2026-07-28 caller's call that needs approval (issue #40 item 3) is not kept waiting: its
 * request ends with `input_required` asking one elicitation under `APPROVAL_INPUT_KEY` — a link to
 * the dashboard's approval page, or a yes/no form where the operator chose `approvalPrompt: form`
 * — and the caller's retry of the same call runs it once approved. No `requestState`: the
 * approval is bound to the call itself (agent, tool, arguments digest), not to a token.
 */

/** The key of the approval's elicitation in `inputRequests`, and of its answer in the retry's `inputResponses`. */
export const APPROVAL_INPUT_KEY = 'switchboard_approval';

/** The retry's answer to the approval prompt, for the hold (`RequestOptions.approvalAnswer`). */
export function approvalAnswerOf(ctx: ServerContext): unknown {
  return (ctx.mcpReq.inputResponses as Record<string, unknown> | undefined)?.[APPROVAL_INPUT_KEY];
}

/** A retry's answers without the approval's: what the server behind the call is given. */
export function withoutApprovalAnswer<T extends Record<string, unknown>>(responses: T | undefined): T | undefined {
  if (responses === undefined || !(APPROVAL_INPUT_KEY in responses)) return responses;
  const { [APPROVAL_INPUT_KEY]: _approval, ...rest } = responses;
  return Object.keys(rest).length > 0 ? (rest as T) : undefined;
}

/** The `input_required` answer to a call waiting for approval. */
export function approvalRound(pending: ApprovalPending, ctx: ServerContext): InputRequiredResult {
  const { approval } = pending;
  const what = `Switchboard holds the call to "${approval.name}" for approval`;
  const params =
    pending.prompt === 'form'
      ? {
          mode: 'form' as const,
          message: `${what}. Approve it?`,
          requestedSchema: {
            type: 'object' as const,
            properties: { approve: { type: 'boolean' as const, title: 'Approve', description: `Run "${approval.name}" with these arguments` } },
            required: ['approve'],
          },
        }
      : {
          mode: 'url' as const,
          message: `${what}: an operator decides on the dashboard. Retry the call once approved.`,
          url: approvalPageUrl(pending, ctx),
          elicitationId: approval.id,
        };
  return inputRequired({ inputRequests: { [APPROVAL_INPUT_KEY]: { method: 'elicitation/create', params } } });
}

/** The dashboard's page of one approval: under `approvalUrl`, else where the agent's request came. */
export function approvalPageUrl(pending: Pick<ApprovalPending, 'approval' | 'dashboardUrl'>, ctx: Pick<ServerContext, 'http'>): string {
  // A configured address may have a path (a reverse proxy's prefix): the page goes under it.
  const base = (pending.dashboardUrl ?? originOf(ctx.http?.req?.url) ?? 'http://127.0.0.1').replace(/\/+$/, '');
  return `${base}/ui#/approvals/${encodeURIComponent(pending.approval.id)}`;
}

function originOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
