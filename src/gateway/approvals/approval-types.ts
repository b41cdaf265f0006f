import type { Progress } from '@modelcontextprotocol/client';
import { SwitchboardError } from '../../errors.js';
import type { ApprovalOutcome, ApprovalRequestedEvent } from '../../events/daemon-events.js';

/** The caller of a held call; `AgentRef` (gateway/agents/agent-ref.ts) is one. */
export interface ApprovalAgent {
  readonly name: string;
}

/** A tool call about to be sent, as the router resolved it. */
export interface ApprovalTarget {
  server: string;
  /** The tool's own name at its server: what the server's `requireApproval` globs match. */
  tool: string;
  /** The exposed name the agent called: what an agent's globs match. */
  name: string;
  arguments?: Record<string, unknown> | undefined;
  /** The server's config: `requireApproval` and `approvalTimeoutMs`. */
  policy: { readonly requireApproval?: readonly string[] | undefined; readonly approvalTimeoutMs?: number | undefined };
}

/** How a 2026-07-28 caller is asked to get a call approved: a link to the dashboard, or a yes/no form it answers itself. */
export type ApprovalPrompt = 'url' | 'form';

export interface HoldOptions {
  agent?: ApprovalAgent | undefined;
  /** The call's own cancellation: an abort withdraws the approval and rejects with its reason. */
  signal: AbortSignal;
  /** Told "waiting for approval" once, when the call is held. */
  onProgress?: ((progress: Progress) => void) | undefined;
  /**
   * The policy rule whose `approve` effect asked for the approval (issue #40 items 1 and 3): the
   * call is held whatever the globs say, and the approval names the rule.
   */
  rule?: string | undefined;
  /**
   * The caller takes `input_required` (a 2026-07-28 client that can be asked `prompt`): the call
   * is not held; it fails with `ApprovalPending`, and the caller's retry of the same call passes
   * once approved. `answer` is the retry's answer to a `form` prompt.
   */
  ask?: { prompt: ApprovalPrompt; answer?: unknown } | undefined;
}

/** A call waiting for an operator, as `GET /approvals` lists it: what `approval.requested` said of it, and when. */
export interface PendingApproval extends Omit<ApprovalRequestedEvent, 'type'> {
  /** ISO time. */
  requestedAt: string;
}

/** A decided approval, as the answer to approve / deny and the audit hook see it. */
export interface ApprovalDecision extends PendingApproval {
  outcome: ApprovalOutcome;
  /** ISO time. */
  decidedAt: string;
  /** "The same call for a while": identical calls pass without approval until then, ISO time. */
  until?: string;
}

/** An operator's answer: `forMs` approves every identical call (agent, tool, arguments digest) for that long. */
export interface DecideOptions {
  forMs?: number | undefined;
}

/**
 * A call whose 2026-07-28 caller is not kept waiting: `/mcp` answers it with `input_required`
 * (http/endpoint/approval-round.ts), and the caller's retry of the same call passes once approved.
 */
export class ApprovalPending extends SwitchboardError {
  constructor(
    readonly approval: PendingApproval,
    readonly prompt: ApprovalPrompt,
    /** `approvalUrl`, when configured. */
    readonly dashboardUrl?: string,
  ) {
    super('APPROVAL_PENDING', `The call to "${approval.name}" waits for approval (${approval.id}); retry it with the same arguments once approved`);
  }
}

/** The failure a decided call ends with, other than approved. */
export function outcomeError(outcome: Exclude<ApprovalOutcome, 'approved'>, name: string, timeoutMs: number, signal?: AbortSignal): unknown {
  if (outcome === 'denied') return new SwitchboardError('APPROVAL_DENIED', `An operator denied the call to "${name}"`);
  if (outcome === 'timeout') return new SwitchboardError('APPROVAL_TIMEOUT', `Nobody approved or denied the call to "${name}" within ${timeoutMs} ms; it did not run`);
  return signal?.aborted ? signal.reason : new SwitchboardError('SHUTTING_DOWN', 'Switchboard is shutting down; the call waiting for approval was cancelled');
}
