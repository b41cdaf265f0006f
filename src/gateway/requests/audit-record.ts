import { isSwitchboardError } from '../../errors.js';
import { ERROR_META_KEY } from '../../upstream/catalogue/tool-bridge.js';
import type { AgentRequest } from './request-router.js';
import type { AuditRecord } from '../audit/audit-log.js';
import type { AuditOutcome } from '../../store/ports.js';
import type { AgentRef } from '../agents/agent-ref.js';
import type { CallOutcome, CallTransport } from './call-metrics.js';

/** Codes that mean the request ran out of time rather than failed. */
const TIMEOUT_CODES = new Set(['TOOL_CALL_TIMEOUT', 'UPSTREAM_TIMEOUT', 'APPROVAL_TIMEOUT']);
/** Codes that mean the request was refused rather than failed. */
const DENIED_CODES = new Set(['APPROVAL_DENIED', 'POLICY_DENIED', 'AGENT_RATE_LIMITED', 'AGENT_BUSY', 'BUDGET_EXCEEDED']);

/** How a request ended, as the runner saw it. */
export interface FinishedRequest {
  request: AgentRequest;
  transport: CallTransport;
  agent: AgentRef | undefined;
  server: string;
  outcome: CallOutcome;
  durationMs: number;
  /** The server's result, when there was one (a tool's `isError` result included). */
  result?: Record<string, unknown>;
  /** What the request was rejected with, when it was. */
  error?: unknown;
  /** Refused because it lay outside the agent's view: the agent heard "unknown", the audit says `denied`. */
  denied?: boolean;
  /** The code-mode run whose script made the request (issue #39). */
  runId?: string | undefined;
}

/**
 * The audit record of a finished tool call, prompt get or resource read (issue #22 item 4);
 * undefined for the kinds that are not audited (completions, subscriptions, log levels).
 */
export function auditRecordOf(finished: FinishedRequest): AuditRecord | undefined {
  const { request } = finished;
  let kind: AuditRecord['kind'];
  let name: string;
  let args: unknown;
  switch (request.method) {
    case 'tools/call':
    case 'prompts/get':
      ({ name, arguments: args } = request);
      kind = request.method;
      break;
    case 'resources/read':
      ({ uri: name } = request);
      kind = request.method;
      break;
    case 'results/read':
      ({ handle: name, read: args } = request);
      kind = request.method;
      break;
    default:
      return undefined;
  }
  const code = codeOf(finished);
  return {
    ...(finished.agent ? { agent: finished.agent.name } : {}),
    transport: finished.transport,
    server: finished.server,
    kind,
    name,
    outcome: finished.denied === true ? 'denied' : auditOutcome(finished.outcome, code),
    ...(code !== undefined ? { code } : {}),
    durationMs: finished.durationMs,
    ...(args !== undefined ? { args } : {}),
    ...(finished.result !== undefined ? { result: finished.result } : {}),
    ...(finished.runId !== undefined ? { runId: finished.runId } : {}),
  };
}

/** The runner's outcome in the audit's terms; a timeout or a refusal is told apart by its code. */
export function auditOutcome(outcome: CallOutcome, code: string | undefined): AuditOutcome {
  switch (outcome) {
    case 'ok':
      return 'ok';
    case 'not_found':
      return 'not_found';
    case 'cancelled':
    case 'shutdown':
      return 'cancelled';
    default:
      if (code !== undefined && TIMEOUT_CODES.has(code)) return 'timeout';
      return code !== undefined && DENIED_CODES.has(code) ? 'denied' : 'error';
  }
}

/** The stable code of a failure: ours, the one a tool error result carries in `_meta`, or `UPSTREAM_ERROR`. */
function codeOf({ outcome, result, error }: FinishedRequest): string | undefined {
  if (outcome === 'ok') return undefined;
  if (result !== undefined) {
    const meta = result._meta as Record<string, { code?: unknown } | undefined> | undefined;
    const code = meta?.[ERROR_META_KEY]?.code;
    return typeof code === 'string' ? code : undefined;
  }
  if (isSwitchboardError(error)) return error.code;
  return outcome === 'cancelled' ? undefined : 'UPSTREAM_ERROR';
}
