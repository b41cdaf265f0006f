import type { Telemetry } from '../../telemetry/telemetry.js';
import type { Clock } from '../../util/clock.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { Approvals } from '../approvals/approvals.js';
import type { StartupState } from '../lists/startup-wait.js';
import type { CallMetrics } from './call-metrics.js';
import type { InFlightCalls } from './in-flight-calls.js';
import { compose, contextOf, type RequestOptions, type RequestResult, type Stage } from './pipeline.js';
import type { RequestMetrics } from './request-metrics.js';
import type { AgentRequest, RequestRouter } from './request-router.js';
import { agentLimit, type AgentLimits } from './stages/agent-limit.js';
import type { AgentBudgets } from '../agents/agent-budgets.js';
import { approvalHold } from './stages/approval-hold.js';
import { budget } from './stages/budget.js';
import { inFlight } from './stages/in-flight.js';
import { observe } from './stages/observe.js';
import { policy } from './stages/policy.js';
import type { Policies } from '../policies/policies.js';
import { resultGuard, type ResultGuardDeps } from './stages/result-guard.js';
import { route } from './stages/route.js';
import { script, type ScriptRunner } from './stages/script.js';
import { startupWait } from './stages/startup-wait.js';

export interface RequestPipelineDeps {
  router: RequestRouter;
  /** Before the startup gate a name may not be listed yet: the request waits for the gate. */
  runtime: StartupState;
  /** Every request in flight, whatever its transport; aborted together at the end of shutdown's grace. */
  calls: InFlightCalls;
  metrics: CallMetrics;
  requestMetrics: RequestMetrics;
  /** Time of the startup wait's deadline. */
  clock: Clock;
  /** The deadline of a request without a `timeoutMs` of its own while it waits for the gate. */
  defaultTimeoutMs: number;
  /** Holds calls to `requireApproval` tools until an operator decides. @default none held */
  approvals?: Pick<Approvals, 'hold' | 'prompt'>;
  /** Tool calls, prompt gets and resource reads, recorded when they end. @default none */
  audit?: Pick<AuditLog, 'recordRequest'>;
  /** Per-agent rate limit and concurrency cap. @default none */
  limits?: AgentLimits;
  /** OpenTelemetry (issue #26): a SERVER span per request, a CLIENT span per upstream attempt. @default none */
  telemetry?: Telemetry;
  /** Token budgets per agent (issue #38). @default none */
  budgets?: Pick<AgentBudgets, 'has' | 'check' | 'charge'>;
  /** The result guard and the kept results (issue #38). @default none: results pass whole */
  results?: ResultGuardDeps;
  /** Code mode (issue #39): runs `scripts/run` requests. @default none: refused with `CODE_MODE_DISABLED` */
  scripts?: ScriptRunner;
  /** Argument policies (issue #40): deny, hold for approval or allow by CEL rules. @default none */
  policies?: Pick<Policies, 'empty' | 'decide'>;
}

/** One agent request through every stage, to its server and back. */
export type RequestPath = (request: AgentRequest, options: RequestOptions) => Promise<RequestResult>;

/**
 * The one path of every agent request (SPEC §7, §17), for REST and `/mcp` alike, read in order:
 *
 * 1. observe — timed, counted in `/metrics`, traced, audited, however it ends;
 * 2. agent limit — the agent's rate limit and concurrency cap; then its token budget (counted after the guard);
 * 3. in flight — its own signal, cancelled by the caller, the client going away, the shutdown;
 * 3a. script — a code-mode script runs here, each of its calls a request along this whole path;
 * 4. startup wait — a name not listed yet while starting is routed again after the gate;
 * 5. approval hold — a `requireApproval` tool waits for an operator, once routed;
 * 5a. policy — the first argument policy that applies denies (`POLICY_DENIED`), holds for approval or allows;
 * 6. result guard — a result over the caller's cap is kept under a handle and cut; reads of kept results are answered here;
 * 7. route — to the owning server in the agent's view, and `Upstream.request`.
 *
 * Observe comes first, not after the limits as SPEC §17 lists it, because a limit's refusal and
 * a request refused at shutdown are audited and counted too. A new cross-cutting rule is a new
 * stage here; stages that are off (no limits, no approvals) are left out, not skipped per request.
 */
export function createRequestPipeline(deps: RequestPipelineDeps): RequestPath {
  const stages: Stage[] = [
    observe({
      serverOf: (request) => deps.router.serverOf(request),
      metrics: deps.metrics,
      requestMetrics: deps.requestMetrics,
      ...(deps.audit ? { audit: deps.audit } : {}),
      ...(deps.telemetry ? { telemetry: deps.telemetry } : {}),
    }),
  ];
  if (deps.limits) stages.push(agentLimit(deps.limits));
  if (deps.budgets) stages.push(budget(deps.budgets));
  stages.push(inFlight(deps.calls));
  if (deps.scripts) stages.push(script(deps.scripts));
  stages.push(startupWait({ runtime: deps.runtime, clock: deps.clock, defaultTimeoutMs: deps.defaultTimeoutMs }));
  if (deps.approvals) stages.push(approvalHold(deps.approvals));
  // Always in the path when configured at all: a reload may bring rules to a daemon that started without.
  if (deps.policies) stages.push(policy(deps.policies, deps.approvals));
  if (deps.results) stages.push(resultGuard(deps.results));
  const run = compose(stages, route(deps.router));
  return (request, options) => run(contextOf(request, options));
}
