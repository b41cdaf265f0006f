import { randomUUID } from 'node:crypto';
import { ownedId } from '../../util/replica-id.js';
import { SwitchboardError } from '../../errors.js';
import { systemClock, type Clock, type ClockTimer } from '../../util/clock.js';
import { deferred, type Deferred } from '../../util/deferred.js';
import { globMatcher } from '../../util/glob-matcher.js';
import type { ApprovalOutcome, PublishEvent } from '../../events/daemon-events.js';
import { CallGrants } from './call-grants.js';
import { callKeyOf } from './call-key.js';
import {
  ApprovalPending,
  outcomeError,
  type ApprovalAgent,
  type ApprovalDecision,
  type ApprovalPrompt,
  type ApprovalTarget,
  type DecideOptions,
  type HoldOptions,
  type PendingApproval,
} from './approval-types.js';

export * from './approval-types.js';

export interface ApprovalsOptions {
  publish: PublishEvent;
  /** Timers of the wait, and the expiry of decisions bound to a call. @default the system clock */
  clock?: Clock;
  /** How long a call waits when its server sets no `approvalTimeoutMs`. @default 120000 */
  timeoutMs?: number;
  /**
   * The agent's own `requireApproval` globs (`agents.<name>.requireApproval`, issue #22 item 1),
   * matched against the exposed tool name. The one place agents' globs join the server's.
   * @default none
   */
  agentGlobs?: (agent: ApprovalAgent) => readonly string[];
  /** Every decision — approved, denied, timed out, withdrawn — with the call's arguments: wire the audit log here. @default nothing */
  onDecision?: (decision: ApprovalDecision, args: Record<string, unknown>) => void;
  /**
   * The arguments as events and `GET /approvals` may show them (`audit.arguments: true`, masked),
   * or undefined to show only their digest (issue #40 item 3). @default never shown
   */
  showArguments?: (args: Record<string, unknown>) => Record<string, unknown> | undefined;
  /** How a 2026-07-28 caller is asked (`approvalPrompt`). @default "url" */
  prompt?: ApprovalPrompt;
  /** The dashboard's address for the approval link (`approvalUrl`). @default the address the agent's request came to */
  dashboardUrl?: string;
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
  /** The whole arguments, for the audit hook (which keeps them only with `audit.arguments`). */
  args: Record<string, unknown>;
  /** `callKeyOf`: the exact call the approval is bound to. */
  key: string;
  timeoutMs: number;
  timer: ClockTimer;
  /** The held request's wait; absent when the caller was answered `input_required`. */
  done?: Deferred<ApprovalOutcome>;
}

/**
 * Calls that need approval — a `requireApproval` glob matched, or a policy rule asked — wait
 * here until an operator approves or denies them, the wait times out, or the caller goes away
 * (issue #22 item 7). An approval is bound to the exact call (issue #40 item 3): agent, tool and
 * the digest of its arguments. Approving one call lets that call run and no other; "the same
 * call for 1 h" (`forMs`) lets identical calls pass until it expires. A 2026-07-28 caller is not
 * kept waiting: it is answered `input_required`, and its retry of the same call passes once
 * approved. Pending approvals and decisions are in memory only: a restart loses them, and
 * shutdown ends each with `SHUTTING_DOWN`. The wait does not count against the call's deadline.
 */
export class Approvals {
  readonly #pending = new Map<string, Held>();
  readonly #clock: Clock;
  readonly #grants: CallGrants;
  readonly #timeoutMs: number;
  #closed = false;

  constructor(private readonly options: ApprovalsOptions) {
    this.#clock = options.clock ?? systemClock;
    this.#grants = new CallGrants(this.#clock);
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  }

  /** How a 2026-07-28 caller is asked to get a call approved. */
  get prompt(): ApprovalPrompt {
    return this.options.prompt ?? 'url';
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
   * `SHUTTING_DOWN`, the signal's abort reason, or — for a caller that takes `input_required` —
   * `ApprovalPending`.
   */
  hold(target: ApprovalTarget, options: HoldOptions): Promise<void> | undefined {
    if (options.rule === undefined && !this.requires(target, options.agent)) return undefined;
    return this.#hold(target, options);
  }

  /** The calls waiting now, oldest first. */
  list(): PendingApproval[] {
    return [...this.#pending.values()].map((held) => held.view);
  }

  /** An operator's answer; throws `APPROVAL_NOT_FOUND` when nothing waits under `id`. */
  decide(id: string, outcome: 'approved' | 'denied', options: DecideOptions = {}): ApprovalDecision {
    const decision = this.#settle(id, outcome, outcome === 'approved' ? options.forMs : undefined);
    if (!decision) throw new SwitchboardError('APPROVAL_NOT_FOUND', `No pending approval "${id}" (decided, timed out or withdrawn)`);
    return decision;
  }

  /** Shutdown: every waiting call ends with `SHUTTING_DOWN`, and later ones are refused the same way. */
  close(): void {
    this.#closed = true;
    for (const id of [...this.#pending.keys()]) this.#settle(id, 'withdrawn');
  }

  async #hold(target: ApprovalTarget, options: HoldOptions): Promise<void> {
    if (this.#closed) throw new SwitchboardError('SHUTTING_DOWN');
    options.signal.throwIfAborted();
    const timeoutMs = target.policy.approvalTimeoutMs ?? this.#timeoutMs;
    const call = callKeyOf(options.agent?.name, target.server, target.tool, target.arguments);
    const ask = options.ask;
    if (ask) {
      // The retry of a call answered `input_required`: its approval, still pending, or decided.
      const waiting = [...this.#pending.values()].find((held) => held.key === call.key && !held.done);
      if (waiting && ask.prompt === 'form' && ask.answer !== undefined) this.#settle(waiting.view.id, approvedBy(ask.answer) ? 'approved' : 'denied');
      else if (waiting) throw new ApprovalPending(waiting.view, ask.prompt, this.options.dashboardUrl);
    }
    const grant = this.#grants.take(call.key);
    if (grant?.outcome === 'approved') return;
    if (grant) throw outcomeError(grant.outcome, target.name, timeoutMs);
    const held = this.#open(target, options, call, timeoutMs);
    if (!held.done) throw new ApprovalPending(held.view, ask?.prompt ?? 'url', this.options.dashboardUrl);
    return this.#wait(held, target, options);
  }

  /** A new pending approval for the call: published, and timed out after `timeoutMs`. */
  #open(target: ApprovalTarget, options: HoldOptions, call: ReturnType<typeof callKeyOf>, timeoutMs: number): Held {
    // Each waiting call keeps its arguments in memory for minutes: bounded, so a flood of held
    // calls is refused at once instead of growing the daemon.
    if (this.#pending.size >= MAX_PENDING_APPROVALS) {
      throw new SwitchboardError('APPROVALS_FULL', `${MAX_PENDING_APPROVALS} calls are already waiting for approval; try again later`, { retryAfterMs: 5_000 });
    }
    const now = this.#clock.now();
    const args = target.arguments ?? {};
    const shown = this.options.showArguments?.(args);
    const replicaId = this.options.replicaId;
    const view: PendingApproval = {
      id: replicaId === undefined ? randomUUID() : ownedId(replicaId, randomUUID()),
      server: target.server,
      tool: target.tool,
      name: target.name,
      ...(shown !== undefined ? { arguments: shown } : {}),
      argumentsDigest: call.argumentsDigest,
      ...(options.rule !== undefined ? { rule: options.rule } : {}),
      mode: options.ask ? 'input_required' : 'held',
      ...(options.agent ? { agent: options.agent.name } : {}),
      requestedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + timeoutMs).toISOString(),
    };
    const timer = this.#clock.setTimeout(() => this.#settle(view.id, 'timeout'), timeoutMs);
    const held: Held = { view, args, key: call.key, timeoutMs, timer, ...(options.ask ? {} : { done: deferred<ApprovalOutcome>() }) };
    this.#pending.set(view.id, held);
    this.options.publish({ type: 'approval.requested', ...view, ...(view.arguments ? { arguments: forEvent(view.arguments) } : {}) });
    return held;
  }

  async #wait(held: Held, target: ApprovalTarget, { signal, onProgress }: HoldOptions): Promise<void> {
    const { view } = held;
    const onAbort = (): void => void this.#settle(view.id, 'withdrawn');
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      // A job later: a 2026-07-28 caller's round attaches its progress channel right after the
      // call starts, in this same job, and progress from before any round is dropped.
      if (onProgress) queueMicrotask(() => this.#pending.has(view.id) && onProgress({ progress: 0, message: WAITING_FOR_APPROVAL }));
      const outcome = await held.done!.promise;
      if (outcome !== 'approved') throw outcomeError(outcome, target.name, held.timeoutMs, signal);
    } finally {
      this.#clock.clearTimeout(held.timer);
      signal.removeEventListener('abort', onAbort);
      this.#pending.delete(view.id);
    }
  }

  /**
   * Ends one approval, once; the event and the audit hook go out before the held call resumes (a
   * microtask later). A caller answered `input_required` is not waiting: its retry finds the
   * decision among the grants. `forMs` also lets identical calls waiting now go ahead.
   */
  #settle(id: string, outcome: ApprovalOutcome, forMs?: number): ApprovalDecision | undefined {
    const held = this.#pending.get(id);
    if (!held) return undefined;
    this.#pending.delete(id);
    this.#clock.clearTimeout(held.timer);
    const { view, key } = held;
    const now = this.#clock.now();
    const until = forMs !== undefined ? now + forMs : undefined;
    const decision: ApprovalDecision = { ...view, outcome, decidedAt: new Date(now).toISOString(), ...(until !== undefined ? { until: new Date(until).toISOString() } : {}) };
    if (until !== undefined) this.#grants.set(key, { outcome: 'approved', until, once: false, approvalId: id });
    else if (!held.done && outcome !== 'withdrawn') this.#grants.set(key, { outcome, until: now + held.timeoutMs, once: true, approvalId: id });
    held.done?.resolve(outcome);
    this.options.publish({
      type: 'approval.resolved',
      id,
      server: view.server,
      tool: view.tool,
      name: view.name,
      ...(view.agent !== undefined ? { agent: view.agent } : {}),
      argumentsDigest: view.argumentsDigest,
      ...(view.rule !== undefined ? { rule: view.rule } : {}),
      outcome,
      ...(decision.until !== undefined ? { until: decision.until } : {}),
    });
    this.options.onDecision?.(decision, held.args);
    if (until !== undefined) {
      for (const other of [...this.#pending.values()]) if (other.key === key && other.done) this.#settle(other.view.id, 'approved');
    }
    return decision;
  }
}

/** A yes/no form's answer: approved only when accepted with `approve: true`. */
function approvedBy(answer: unknown): boolean {
  const result = answer as { action?: unknown; content?: { approve?: unknown } } | null;
  return result?.action === 'accept' && result.content?.approve === true;
}
