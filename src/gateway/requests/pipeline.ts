import type { Progress } from '@modelcontextprotocol/client';
import type { RequestSpan } from '../../telemetry/request-span.js';
import type { AgentTrace } from '../../telemetry/telemetry.js';
import type { CallerChannel } from '../../upstream/transport/caller.js';
import type { AgentRef } from '../agents/agent-ref.js';
import type { ApprovalTarget } from '../approvals/approvals.js';
import type { CallTransport } from './call-metrics.js';
import type { ClientResponse } from './client-gone.js';
import type { AgentRequest } from './request-router.js';

/** How one agent request is to be run: the wire it came on and what travels with it. */
export interface RequestOptions {
  transport: CallTransport;
  /** Overrides the server's `callTimeout` for this request. */
  timeoutMs?: number;
  /** Cancels the request (the client went away, or said so); its reason is the request's abort reason. */
  signal?: AbortSignal;
  /**
   * A REST caller's response: the request is cancelled with `CLIENT_GONE` when the client goes
   * away before the response has ended (cheaper than a `signal` of its own per request).
   */
  client?: ClientResponse;
  /** Each progress notification of the server, as it arrives. */
  onProgress?: (progress: Progress) => void;
  /** The agent behind the request, for the server's sampling / elicitation / roots requests. */
  caller?: CallerChannel;
  /** The agent whose key the request carried; absent for the operator and without keys. */
  agent?: AgentRef;
  /** The agent's trace context and session, for the request's span (only read when tracing is on). */
  trace?: AgentTrace;
  /** The code-mode run whose script makes this request (issue #39): audited with it. */
  runId?: string;
  /**
   * A 2026-07-28 caller's answer to the approval prompt of its earlier try (`input_required`,
   * issue #40 item 3): a yes/no form's result, read by the approval hold.
   */
  approvalAnswer?: unknown;
}

/** A request's result as its server answered it. */
export type RequestResult = Record<string, unknown>;

/** One request on its way through the stages; a stage fills in what the later ones read. */
export interface RequestContext {
  readonly request: AgentRequest;
  readonly options: RequestOptions;
  /** The request's own signal, from the in-flight stage on: aborted by the caller, the client going away or the shutdown. */
  signal: AbortSignal | undefined;
  /** The request's SERVER span when tracing is on (the observe stage). */
  span: RequestSpan | undefined;
  /** Holds a routed tool call until an operator decides (the approval stage); the router asks it between route and send. */
  hold: ((target: ApprovalTarget) => Promise<void> | undefined) | undefined;
  /**
   * The policy rule whose `approve` effect asks for the call's approval (issue #40): a stage before
   * the route sets it, and the hold then holds the call whatever the globs say, naming the rule.
   */
  approvalRule?: string | undefined;
}

/** A stage: does its part around `next`, the rest of the path. `next` may be called again (the startup wait does). */
export type Stage = (ctx: RequestContext, next: () => Promise<RequestResult>) => Promise<RequestResult>;

/** The end of the path: the request leaves for its server. */
export type Terminal = (ctx: RequestContext) => Promise<RequestResult>;

/**
 * The stages in order, then the terminal, as one function of a request (the shape of hono's
 * `compose` and undici's interceptors). The stages are closed over once; a request costs one
 * `next` closure per stage.
 */
export function compose(stages: readonly Stage[], terminal: Terminal): (ctx: RequestContext) => Promise<RequestResult> {
  const run = (index: number, ctx: RequestContext): Promise<RequestResult> => {
    const stage = stages[index];
    if (stage === undefined) return terminal(ctx);
    return stage(ctx, () => run(index + 1, ctx));
  };
  return (ctx) => run(0, ctx);
}

/** A fresh context for `request`. */
export function contextOf(request: AgentRequest, options: RequestOptions): RequestContext {
  return { request, options, signal: undefined, span: undefined, hold: undefined };
}
