import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { CallToolResult, Progress } from '@modelcontextprotocol/client';
import { isSwitchboardError } from '../../errors.js';
import type { Approvals, ApprovalTarget } from '../approvals/approvals.js';
import type { CallerChannel } from '../../upstream/transport/caller.js';
import { isViewDenial, type AgentRequest, type RequestRouter } from './request-router.js';
import { DEFAULT_CALL_TIMEOUT_MS } from '../../upstream/transport/client.js';
import type { StartupState } from '../lists/startup-wait.js';
import { abortable, createDeadline } from '../../util/abort.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { AgentSlot } from '../agents/agent-limits.js';
import type { AgentRef } from '../agents/agent-ref.js';
import type { AgentView } from '../agents/agent-view.js';
import { auditRecordOf } from '../audit/audit-request.js';
import type { CallMetrics, CallOutcome, CallTransport } from './call-metrics.js';
import { onClientGone } from './client-gone.js';
import { CLIENT_GONE, type InFlightCalls } from './in-flight-calls.js';
import type { RequestMetrics } from './request-metrics.js';
import { RequestSpan } from '../../telemetry/request-span.js';
import type { AgentTrace, Telemetry } from '../../telemetry/telemetry.js';

export interface RunOptions {
  transport: CallTransport;
  /** Overrides the server's `callTimeout` for this request. */
  timeoutMs?: number;
  /** Cancels the request (the client went away, or said so); its reason is the request's abort reason. */
  signal?: AbortSignal;
  /**
   * A REST caller's response: the request is cancelled with `CLIENT_GONE` when the client goes
   * away before the response has ended (cheaper than a `signal` of its own per request).
   */
  client?: ServerResponse;
  /** Each progress notification of the server, as it arrives. */
  onProgress?: (progress: Progress) => void;
  /** The agent behind the request, for the server's sampling / elicitation / roots requests. */
  caller?: CallerChannel;
  /** The agent whose key the request carried; absent for the operator and without keys. */
  agent?: AgentRef;
  /** The agent's trace context and session, for the request's span (only read when tracing is on). */
  trace?: AgentTrace;
}

export interface RequestRunnerDeps {
  /** Routes each request to its server's `Upstream.request`. */
  router: RequestRouter;
  /** Before the startup gate a name may not be listed yet: the runner waits for the gate. */
  runtime: StartupState;
  /** Every request in flight, whatever its transport; aborted together at the end of shutdown's grace. */
  calls: InFlightCalls;
  /** Tool calls by tool. */
  metrics: CallMetrics;
  /** Upstream requests of every kind by method. */
  requestMetrics: RequestMetrics;
  /** Holds calls to `requireApproval` tools until an operator decides. @default none held */
  approvals?: Pick<Approvals, 'hold'>;
  /** Tool calls, prompt gets and resource reads, recorded when they end. @default none */
  audit?: Pick<AuditLog, 'recordRequest'>;
  /** Per-agent rate limit and concurrency cap: a slot per request of an agent, or a refusal. @default none */
  limits?: { enter(agent: AgentRef): AgentSlot };
  /** OpenTelemetry (issue #26): a SERVER span per request, a CLIENT span per upstream attempt. @default none: no tracing */
  telemetry?: Telemetry;
}

const NOT_FOUND = ['TOOL_NOT_FOUND', 'PROMPT_NOT_FOUND', 'RESOURCE_NOT_FOUND'] as const;

/**
 * The one path of every agent request to an upstream, for REST and `/mcp` alike (SPEC §7): tool
 * calls, prompts, resources, completions, subscriptions and log levels. It registers the request
 * with the in-flight set (so the drain can cancel it), links the caller's cancellation, waits for
 * the startup gate when the name is not listed yet, hands the request to the manager's router
 * (and so to the server's `Upstream.request`), and counts it in `/metrics`. What the caller's
 * protocol makes of the result — a JSON body, an SSE stream, a JSON-RPC answer — is its own business.
 */
export class RequestRunner {
  constructor(private readonly deps: RequestRunnerDeps) {}

  /** Whether requests are traced: callers gather `RunOptions.trace` only then. */
  get tracing(): boolean {
    return this.deps.telemetry !== undefined;
  }

  /** Requests in flight right now. */
  get inFlight(): number {
    return this.deps.calls.size;
  }

  /** Throws `TOOL_CHANGED` when `name` is a tool held because its definition changed (see `RequestRouter.refuseHeld`). */
  refuseHeld(name: string, view?: AgentView): void {
    this.deps.router.refuseHeld(name, view);
  }

  /** A tool call: resolves with the tool's result (upstream failures are `isError` results). */
  call(name: string, args: Record<string, unknown> | undefined, options: RunOptions): Promise<CallToolResult> {
    return this.run({ method: 'tools/call', name, arguments: args }, options) as Promise<CallToolResult>;
  }

  /**
   * Runs the request. Resolves with the server's result; rejects with `*_NOT_FOUND`, with
   * `SHUTTING_DOWN`, with the server's or our own error, or — when `signal` aborted it — with
   * that signal's reason.
   */
  async run(request: AgentRequest, options: RunOptions): Promise<Record<string, unknown>> {
    const { calls } = this.deps;
    const started = performance.now();
    let outcome: CallOutcome = 'error';
    let result: Record<string, unknown> | undefined;
    let error: unknown;
    let controller: AbortController | undefined;
    const { signal } = options;
    const onAbort = (): void => controller?.abort(signal?.reason);
    let stopWatchingClient: (() => void) | undefined;
    let slot: AgentSlot | undefined;
    // The one check tracing costs when it is off.
    const span = this.deps.telemetry ? new RequestSpan(this.deps.telemetry, request, options.transport, options.trace) : undefined;
    try {
      // An unsubscribe only releases what the agent holds: never refused.
      if (options.agent && this.deps.limits && request.method !== 'resources/unsubscribe') slot = this.deps.limits.enter(options.agent);
      controller = calls.begin();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
      const own = controller;
      if (options.client) stopWatchingClient = onClientGone(options.client, () => own.abort(CLIENT_GONE));
      result = await this.send(request, options, controller.signal, span);
      outcome = request.method === 'tools/call' && result.isError === true ? 'tool_error' : 'ok';
      return result;
    } catch (err) {
      outcome = outcomeOf(err, controller?.signal);
      error = controller?.signal.aborted ? controller.signal.reason : err;
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      stopWatchingClient?.();
      slot?.release();
      if (controller) calls.end(controller);
      const durationMs = performance.now() - started;
      const server = this.deps.router.serverOf(request);
      this.record(request, options.transport, server, outcome, durationMs / 1000);
      span?.end(result, error, server);
      if (this.deps.audit) {
        const denied = error !== undefined && isViewDenial(error);
        const audited = auditRecordOf({ request, transport: options.transport, agent: options.agent, server, outcome, durationMs, result, error, denied });
        if (audited) this.deps.audit.recordRequest(audited);
      }
    }
  }

  /** Sends once; a name not listed while the startup gate is still open is tried again after it. */
  private async send(request: AgentRequest, options: RunOptions, signal: AbortSignal, span: RequestSpan | undefined): Promise<Record<string, unknown>> {
    const { router, runtime, approvals } = this.deps;
    const sendOptions = {
      signal,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.caller ? { caller: options.caller } : {}),
      ...(span ? { trace: span } : {}),
      // Outside the agent's view a name is unknown (issue #22): the router checks, for every kind.
      ...(options.agent?.view ? { view: options.agent.view } : {}),
      // The caller's agent goes with the hold: its own `requireApproval` globs join the server's (approvals.ts).
      ...(approvals ? { hold: (target: ApprovalTarget) => approvals.hold(target, { agent: options.agent, signal, onProgress: options.onProgress }) } : {}),
    };
    try {
      return await router.send(request, sendOptions);
    } catch (err) {
      if (runtime.state !== 'starting' || !NOT_FOUND.some((code) => isSwitchboardError(err, code))) throw err;
    }
    // Within the request's own deadline (the default call timeout when it has none of its own).
    const deadline = createDeadline(signal, options.timeoutMs || DEFAULT_CALL_TIMEOUT_MS);
    try {
      await abortable(runtime.whenReady().catch(() => undefined), deadline.signal);
    } catch (err) {
      if (signal.aborted) throw err;
      // The gate outlasted the deadline: the name is still unknown.
    } finally {
      deadline.dispose();
    }
    return router.send(request, sendOptions);
  }

  private record(request: AgentRequest, transport: CallTransport, server: string, outcome: CallOutcome, seconds: number): void {
    this.deps.requestMetrics.record({ transport, server, method: request.method, outcome });
    if (request.method === 'tools/call') this.deps.metrics.record({ transport, server, tool: request.name, outcome }, seconds);
  }
}

function outcomeOf(err: unknown, signal: AbortSignal | undefined): CallOutcome {
  const reason: unknown = signal?.aborted ? signal.reason : err;
  if (isSwitchboardError(reason, 'SHUTTING_DOWN')) return 'shutdown';
  if (signal?.aborted) return 'cancelled';
  if (NOT_FOUND.some((code) => isSwitchboardError(err, code))) return 'not_found';
  return 'error';
}
