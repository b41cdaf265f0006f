import { performance } from 'node:perf_hooks';
import { isSwitchboardError } from '../../../errors.js';
import { RequestSpan } from '../../../telemetry/request-span.js';
import type { Telemetry } from '../../../telemetry/telemetry.js';
import type { AuditLog } from '../../audit/audit-log.js';
import { auditRecordOf } from '../audit-record.js';
import type { CallMetrics, CallOutcome } from '../call-metrics.js';
import type { RequestContext, RequestResult, Stage } from '../pipeline.js';
import type { RequestMetrics } from '../request-metrics.js';
import { isViewDenial, type AgentRequest } from '../request-router.js';

export interface ObserveDeps {
  /** The server a request goes to, for its labels ('' when it names nothing known). */
  serverOf(request: AgentRequest): string;
  /** Tool calls by tool. */
  metrics: CallMetrics;
  /** Upstream requests of every kind by method. */
  requestMetrics: RequestMetrics;
  /** Tool calls, prompt gets and resource reads, recorded when they end. @default none */
  audit?: Pick<AuditLog, 'recordRequest'>;
  /** A SERVER span per request (issue #26). @default none: no tracing */
  telemetry?: Telemetry;
  /** @default performance.now */
  now?: () => number;
}

export const NOT_FOUND = ['TOOL_NOT_FOUND', 'PROMPT_NOT_FOUND', 'RESOURCE_NOT_FOUND'] as const;

/**
 * Outermost: every request is timed, counted in `/metrics`, traced and audited however it ends
 * — a limit's refusal and the shutdown's included, so this stage wraps all the others.
 */
export function observe(deps: ObserveDeps): Stage {
  const now = deps.now ?? (() => performance.now());
  return async (ctx: RequestContext, next: () => Promise<RequestResult>): Promise<RequestResult> => {
    const { request, options } = ctx;
    const started = now();
    let outcome: CallOutcome = 'error';
    let result: RequestResult | undefined;
    let error: unknown;
    // The one check tracing costs when it is off.
    if (deps.telemetry) ctx.span = new RequestSpan(deps.telemetry, request, options.transport, options.trace);
    try {
      result = await next();
      outcome = request.method === 'tools/call' && result.isError === true ? 'tool_error' : 'ok';
      return result;
    } catch (err) {
      outcome = outcomeOf(err, ctx.signal);
      error = ctx.signal?.aborted ? ctx.signal.reason : err;
      throw err;
    } finally {
      const durationMs = now() - started;
      const server = deps.serverOf(request);
      deps.requestMetrics.record({ transport: options.transport, server, method: request.method, outcome });
      if (request.method === 'tools/call') deps.metrics.record({ transport: options.transport, server, tool: request.name, outcome }, durationMs / 1000);
      ctx.span?.end(result, error, server);
      if (deps.audit) {
        const denied = error !== undefined && isViewDenial(error);
        const audited = auditRecordOf({ request, transport: options.transport, agent: options.agent, server, outcome, durationMs, result, error, denied, runId: options.runId });
        if (audited) deps.audit.recordRequest(audited);
      }
    }
  };
}

function outcomeOf(err: unknown, signal: AbortSignal | undefined): CallOutcome {
  const reason: unknown = signal?.aborted ? signal.reason : err;
  if (isSwitchboardError(reason, 'SHUTTING_DOWN')) return 'shutdown';
  if (signal?.aborted) return 'cancelled';
  if (NOT_FOUND.some((code) => isSwitchboardError(err, code))) return 'not_found';
  return 'error';
}
