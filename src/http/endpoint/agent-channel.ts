import {
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  inputRequired,
  type ClientCapabilities,
  type InputRequiredResult,
  type LoggingLevel,
  type Progress,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { SwitchboardError } from '../../errors.js';
import type { CallerChannel } from '../../upstream/transport/caller.js';
import { capabilityOf } from '../../upstream/transport/caller.js';
import { noAgent, type AgentRequest } from '../../upstream/transport/server-traffic.js';
import { isInputRequired, type AgentOptions } from '../../upstream/transport/input-required.js';
import { Continuation, type Continuations, type Round } from './continuations.js';
import { RelayStates } from './relay-state.js';
import { withoutApprovalAnswer } from './approval-round.js';
import type { AgentRef } from '../../gateway/index.js';

/** What a 2025-era session keeps between its requests. */
export interface SessionState {
  /** The session id (once `initialize` assigned one). */
  readonly id: () => string | undefined;
  /** The client's capabilities, as it declared them at `initialize`. */
  readonly clientCapabilities: () => ClientCapabilities | undefined;
  /** `logging/setLevel` of this session; unset, every message is shown. */
  logLevel?: LoggingLevel;
  /** URIs this session subscribed to (`resources/subscribe`). */
  readonly subscriptions: Set<string>;
  /** The agent whose key opened the session (issue #22); later requests must carry the same one (and refresh its view). */
  agent?: AgentRef;
}

/**
 * How long Switchboard waits for a 2025-era agent to answer a server's question (a human may be
 * typing). The call's own deadline and cancellation end it sooner. @default 600000
 */
export const AGENT_ANSWER_TIMEOUT_MS = 10 * 60_000;

const SEVERITY: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** Whether a message of `level` passes a threshold (no threshold: everything passes). */
export function passesLevel(level: unknown, threshold: LoggingLevel | undefined): boolean {
  if (threshold === undefined) return true;
  const rank = SEVERITY.indexOf(level as LoggingLevel);
  return rank === -1 || rank >= SEVERITY.indexOf(threshold);
}

/** A server's log message as an agent sees it: the server's name in `logger` (SPEC §7). */
export function asAgentLog(server: string, params: Record<string, unknown>): Record<string, unknown> {
  const logger = typeof params.logger === 'string' && params.logger !== '' ? `${server}/${params.logger}` : server;
  return { ...params, logger };
}

export interface AgentWork<T> {
  (caller: CallerChannel, signal: AbortSignal, onProgress: (progress: Progress) => void): Promise<T>;
}

export interface AgentContext {
  continuations: Continuations;
  relayStates: RelayStates;
  /** The 2025-era session the request came on; absent for a 2026-07-28 request. */
  session?: SessionState;
}

/**
 * Runs a request that may reach a server which asks the agent something (tools/call,
 * prompts/get, resources/read), with the agent behind it as the channel for those questions, its
 * progress token for progress, and its log level for log messages.
 *
 * - A 2025-era session is asked directly: the server's request is sent on the calling request's
 *   stream, and the answer goes back to the server.
 * - A 2026-07-28 caller is asked with `input_required` (see continuations.ts): the request then
 *   resolves with that result, and the caller's retry — carrying `requestState` — continues it.
 */
export async function runForAgent<T>(ctx: ServerContext, agent: AgentContext, target: string, work: AgentWork<T>): Promise<T | InputRequiredResult> {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  const notifyProgress =
    progressToken === undefined
      ? undefined
      : (progress: Progress): void => {
          void ctx.mcpReq.notify({ method: 'notifications/progress', params: { ...progress, progressToken } }).catch(() => undefined);
        };
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  if (envelope === undefined) return runForSession(ctx, agent.session, work, notifyProgress);

  const logLevel = envelope[LOG_LEVEL_META_KEY] as LoggingLevel | undefined;
  const round: Round = {
    ...(notifyProgress ? { progress: notifyProgress } : {}),
    // The 2026-07-28 revision sends log messages only to a request that asked for a level.
    ...(logLevel !== undefined
      ? {
          log: (params: Record<string, unknown>) =>
            passesLevel(params.level, logLevel) && void ctx.mcpReq.notify({ method: 'notifications/message', params: params as never }).catch(() => undefined),
        }
      : {}),
  };
  const state = ctx.mcpReq.requestState<unknown>();
  // The answer to an approval prompt is the hold's (approval-round.ts), never the server's.
  const inputResponses = withoutApprovalAnswer(ctx.mcpReq.inputResponses);
  // Answers on a first request are the server's business too (it may accept them at once).
  let resume: AgentOptions['resume'] = inputResponses ? { inputResponses } : undefined;
  let continuation: Continuation<T> | undefined;
  if (state !== undefined) {
    if (typeof state === 'string' && RelayStates.owns(state)) {
      // The retry of a server's own input_required: its answers and state go back to it.
      const opened = agent.relayStates.open(state, target);
      if (!opened) throw invalidState();
      resume = {
        inputResponses: { ...inputResponses, ...opened.answered },
        ...(opened.serverState !== undefined ? { requestState: opened.serverState } : {}),
      };
    } else {
      // The retry of a call parked on a 2025 server's question: the answers go to the waiting server.
      continuation = typeof state === 'string' ? agent.continuations.take<T>(state) : undefined;
      if (!continuation) throw invalidState();
      continuation.answer(inputResponses);
    }
  }
  if (!continuation) {
    const capabilities = envelope[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
    continuation = new Continuation<T>((self) => {
      const caller: CallerChannel = {
        get agent() {
          return self.token;
        },
        capabilities,
        takesInputRequired: true,
        ...(resume ? { resume } : {}),
        logLevel,
        can: (method) => hasCapability(capabilities, method),
        request: (method, params, signal) => {
          if (!agent.continuations.hasRoom) throw noAgent(method, 'too many calls are waiting for their agents');
          return self.ask(method, params, signal);
        },
        log: (server, params) => self.log(asAgentLog(server, params)),
      };
      return work(caller, self.signal, (progress) => self.progress(progress));
    }, agent.continuations.tokenPrefix);
  }
  const outcome = await continuation.next(round, ctx.mcpReq.signal);
  if (outcome.kind === 'failed') throw outcome.error;
  if (outcome.kind === 'done') {
    // A modern server's own input_required goes to the agent as the server wrote it, with the
    // server's state sealed so that only the same request can carry it back.
    if (!isInputRequired(outcome.value)) return outcome.value;
    const { inputRequests, requestState, answered } = outcome.value;
    return inputRequired({ ...(inputRequests ? { inputRequests: inputRequests as never } : {}), requestState: agent.relayStates.seal(target, requestState, answered) });
  }
  agent.continuations.park(continuation as Continuation<unknown>);
  return inputRequired({ inputRequests: outcome.requests as never, requestState: continuation.token });
}

/**
 * Someone else's, tampered with, expired, or from before a restart: nothing to continue. The
 * handlers answer it as InvalidParams (errors/jsonrpc-error.ts).
 */
function invalidState(): SwitchboardError {
  return new SwitchboardError('VALIDATION_FAILED', 'Invalid or expired requestState');
}

async function runForSession<T>(ctx: ServerContext, session: SessionState | undefined, work: AgentWork<T>, notifyProgress: ((progress: Progress) => void) | undefined): Promise<T> {
  let last = -Infinity;
  const capabilities = session?.clientCapabilities();
  const caller: CallerChannel = {
    agent: session?.id() ?? 'unknown-session',
    capabilities,
    takesInputRequired: false,
    // A session that set no level is shown every message, as a 2025 server sends them all; a
    // 2026-07-28 server sends only what a request asks for, so it is asked for everything.
    logLevel: session?.logLevel ?? 'debug',
    can: (method) => hasCapability(session?.clientCapabilities(), method),
    request: (method: AgentRequest, params, signal) =>
      ctx.mcpReq.send({ method, ...(params ? { params } : {}) } as never, { signal, timeout: AGENT_ANSWER_TIMEOUT_MS }) as Promise<Record<string, unknown>>,
    log: (server, params) => {
      if (!passesLevel(params.level, session?.logLevel)) return;
      void ctx.mcpReq.notify({ method: 'notifications/message', params: asAgentLog(server, params) as never }).catch(() => undefined);
    },
  };
  return work(caller, ctx.mcpReq.signal, (progress) => {
    // A call retried after a reconnect starts its progress over; the agent must never see it go back.
    if (progress.progress <= last) return;
    last = progress.progress;
    notifyProgress?.(progress);
  });
}

function hasCapability(capabilities: ClientCapabilities | undefined, method: AgentRequest): boolean {
  return capabilities?.[capabilityOf(method)] !== undefined;
}
