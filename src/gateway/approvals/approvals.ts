import { randomUUID } from 'node:crypto';
import { ownedId } from '../../util/replica-id.js';
import type { Progress } from '@modelcontextprotocol/client';
import { SwitchboardError } from '../../errors.js';
import { systemClock, type Clock } from '../../util/clock.js';
import { deferred, type Deferred } from '../../util/deferred.js';
import { globMatcher } from '../../util/glob-matcher.js';
import type { ApprovalOutcome, PublishEvent } from '../../events/daemon-events.js';

/** The caller of a held call; `AgentRef` (http/calls/agent-ref.ts) is one. */
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

export interface HoldOptions {
  agent?: ApprovalAgent | undefined;
  /** The call's own cancellation: an abort withdraws the approval and rejects with its reason. */
  signal: AbortSignal;
  /** Told "waiting for approval" once, when the call is held. */
  onProgress?: ((progress: Progress) => void) | undefined;
  /** The policy rule (`effect: approve`, issue #40) that asked: the call is held whatever `requireApproval` says, and the approval names the rule. */
  rule?: string | undefined;
}

/** A call waiting for an operator, as `GET /approvals` lists it. */
export interface PendingApproval {
  id: string;
  server: string;
  tool: string;
  name: string;
  arguments: Record<string, unknown>;
  agent?: string;
  /** The policy rule that asked for the approval (issue #40); absent for `requireApproval`. */
  rule?: string;
  /** ISO times. */
  requestedAt: string;
  expiresAt: string;
}

/** A decided approval, for the audit log (`onDecision`) and the answer to approve / deny. */
export interface ApprovalDecision extends PendingApproval {
  outcome: ApprovalOutcome;
  /** ISO time. */
  decidedAt: string;
}

export interface ApprovalsOptions {
  publish: PublishEvent;
  /** Timers of the wait. @default the system clock */
  clock?: Clock;
  /** How long a call waits when its server sets no `approvalTimeoutMs`. @default 120000 */
  timeoutMs?: number;
  /**
   * The agent's own `requireApproval` globs (`agents.<name>.requireApproval`, issue #22 item 1),
   * matched against the exposed tool name. The one place agents' globs join the server's.
   * @default none
   */
  agentGlobs?: (agent: ApprovalAgent) => readonly string[];
  /** Every decision — approved, denied, timed out, withdrawn — as it is made: wire the audit log here. @default nothing */
  onDecision?: (decision: ApprovalDecision) => void;
  /** In a cluster, the replica id every approval id starts with: a decision sent to another replica is forwarded here. */
  replicaId?: string;
}

/** The message of the progress notification a held call sends. */
export const WAITING_FOR_APPROVAL = 'waiting for approval';

export const DEFAULT_APPROVAL_TIMEOUT_MS = 120_000;

/** Calls that may wait for approval at once, daemon-wide; more are refused with `APPROVALS_FULL`. */
export const MAX_PENDING_APPROVALS = 256;

/** Larger arguments are not copied into the event (every feed subscriber gets it, and the replay ring keeps it). */
export const MAX_EVENT_ARGUMENT_BYTES = 16 * 1024;

/** The arguments as the event carries them: whole when small, else only their size (`GET /approvals` has them whole). */
function forEvent(args: Record<string, unknown>): Record<string, unknown> {
  const bytes = Buffer.byteLength(JSON.stringify(args));
  return bytes <= MAX_EVENT_ARGUMENT_BYTES ? args : { 'switchboard/truncated': true, bytes };
}

interface Held {
  view: PendingApproval;
  done: Deferred<ApprovalOutcome>;
}

/**
 * Calls to tools in a `requireApproval` list wait here until an operator approves or denies
 * them, the wait times out, or the caller goes away (issue #22 item 7). Pending approvals are in
 * memory only: a restart loses them, and shutdown ends each with `SHUTTING_DOWN`. The wait does
 * not count against the call's deadline: that starts when the call is sent, since a person's
 * answer would otherwise eat a `callTimeout` that is sized for the tool.
 */
export class Approvals {
  readonly #pending = new Map<string, Held>();
  readonly #clock: Clock;
  readonly #replicaId: string | undefined;
  readonly #timeoutMs: number;
  #closed = false;

  constructor(private readonly options: ApprovalsOptions) {
    this.#clock = options.clock ?? systemClock;
    this.#replicaId = options.replicaId;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  }

  /** Whether a call to `target` by `agent` must wait for an operator. */
  requires(target: ApprovalTarget, agent?: ApprovalAgent): boolean {
    const serverGlobs = target.policy.requireApproval;
    if (serverGlobs !== undefined && globMatcher(serverGlobs)(target.tool)) return true;
    const agentGlobs = agent && this.options.agentGlobs?.(agent);
    return agentGlobs !== undefined && globMatcher(agentGlobs)(target.name);
  }

  /**
   * Undefined when the call needs no approval (the hot path allocates nothing); else a promise
   * that resolves once it is approved, and rejects with `APPROVAL_DENIED`, `APPROVAL_TIMEOUT`,
   * `SHUTTING_DOWN` or the signal's abort reason.
   */
  hold(target: ApprovalTarget, options: HoldOptions): Promise<void> | undefined {
    if (options.rule === undefined && !this.requires(target, options.agent)) return undefined;
    return this.#wait(target, options);
  }

  /** The calls waiting now, oldest first. */
  list(): PendingApproval[] {
    return [...this.#pending.values()].map((held) => held.view);
  }

  /** An operator's answer; throws `APPROVAL_NOT_FOUND` when nothing waits under `id`. */
  decide(id: string, outcome: 'approved' | 'denied'): ApprovalDecision {
    const decision = this.#settle(id, outcome);
    if (!decision) throw new SwitchboardError('APPROVAL_NOT_FOUND', `No pending approval "${id}" (decided, timed out or withdrawn)`);
    return decision;
  }

  /** Shutdown: every waiting call ends with `SHUTTING_DOWN`, and later ones are refused the same way. */
  close(): void {
    this.#closed = true;
    for (const id of [...this.#pending.keys()]) this.#settle(id, 'withdrawn');
  }

  async #wait(target: ApprovalTarget, { agent, signal, onProgress, rule }: HoldOptions): Promise<void> {
    if (this.#closed) throw new SwitchboardError('SHUTTING_DOWN');
    signal.throwIfAborted();
    // Each waiting call keeps its arguments in memory for minutes: bounded, so a flood of held
    // calls is refused at once instead of growing the daemon.
    if (this.#pending.size >= MAX_PENDING_APPROVALS) {
      throw new SwitchboardError('APPROVALS_FULL', `${MAX_PENDING_APPROVALS} calls are already waiting for approval; try again later`, { retryAfterMs: 5_000 });
    }
    const timeoutMs = target.policy.approvalTimeoutMs ?? this.#timeoutMs;
    const now = this.#clock.now();
    const view: PendingApproval = {
      id: this.#replicaId === undefined ? randomUUID() : ownedId(this.#replicaId, randomUUID()),
      server: target.server,
      tool: target.tool,
      name: target.name,
      arguments: target.arguments ?? {},
      ...(agent ? { agent: agent.name } : {}),
      ...(rule !== undefined ? { rule } : {}),
      requestedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + timeoutMs).toISOString(),
    };
    const held: Held = { view, done: deferred() };
    this.#pending.set(view.id, held);
    const timer = this.#clock.setTimeout(() => this.#settle(view.id, 'timeout'), timeoutMs);
    const onAbort = (): void => void this.#settle(view.id, 'withdrawn');
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      this.options.publish({ type: 'approval.requested', ...view, arguments: forEvent(view.arguments) });
      // A job later: a 2026-07-28 caller's round attaches its progress channel right after the
      // call starts, in this same job, and progress from before any round is dropped.
      if (onProgress) queueMicrotask(() => this.#pending.has(view.id) && onProgress({ progress: 0, message: WAITING_FOR_APPROVAL }));
      const outcome = await held.done.promise;
      if (outcome === 'approved') return;
      if (outcome === 'denied') throw new SwitchboardError('APPROVAL_DENIED', `An operator denied the call to "${target.name}"`);
      if (outcome === 'timeout') throw new SwitchboardError('APPROVAL_TIMEOUT', `Nobody approved or denied the call to "${target.name}" within ${timeoutMs} ms; it did not run`);
      throw signal.aborted ? signal.reason : new SwitchboardError('SHUTTING_DOWN', 'Switchboard is shutting down; the call waiting for approval was cancelled');
    } finally {
      this.#clock.clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      this.#pending.delete(view.id);
    }
  }

  /** Ends one wait, once; the event and the audit hook go out before the held call resumes (a microtask later). */
  #settle(id: string, outcome: ApprovalOutcome): ApprovalDecision | undefined {
    const held = this.#pending.get(id);
    if (!held) return undefined;
    this.#pending.delete(id);
    const { view } = held;
    const decision: ApprovalDecision = { ...view, outcome, decidedAt: new Date(this.#clock.now()).toISOString() };
    held.done.resolve(outcome);
    this.options.publish({
      type: 'approval.resolved',
      id,
      server: view.server,
      tool: view.tool,
      name: view.name,
      ...(view.agent !== undefined ? { agent: view.agent } : {}),
      outcome,
    });
    this.options.onDecision?.(decision);
    return decision;
  }
}
