import type { ClientCapabilities, Root } from '@modelcontextprotocol/client';
import { confineRootsAnswer } from './roots.js';
import { OWN_UI_CAPABILITIES } from './ui-extension.js';
import { AGENT_REQUESTS, type AgentRequest, type ServerTraffic } from './server-traffic.js';
import { sdk } from '../sdk.js';

/**
 * A 2026-07-28 server asks its questions (sampling, elicitation, roots) by answering a request
 * with `input_required`; the client retries with `inputResponses` and the server's
 * `requestState` (SPEC §7). Switchboard either hands that result to an agent that speaks the
 * revision (`relay`), or answers the questions itself through the same route a 2025 server's
 * requests take — the agent's session, the configured roots, or a refusal — and retries.
 */

/** Who is behind a forwarded request, as far as a modern-era server is concerned. */
export interface AgentOptions {
  /** What the agent can be asked; the server is told this instead of Switchboard's own. */
  capabilities?: ClientCapabilities;
  /** The agent takes `input_required` itself: give the server's result back as it is. */
  relayInputRequired?: boolean;
  /** The answers and state of the agent's retry, for the server. */
  resume?: { inputResponses?: Record<string, unknown>; requestState?: string };
  /** The level of log messages the agent wants from this request (see CallerChannel.logLevel). */
  logLevel?: string;
}

/** Rounds of questions one request may take before it is given up. @default 10 */
export const MAX_INPUT_ROUNDS = 10;

/** What Switchboard can answer without an agent: roots, the server entry's (none: an empty list). */
const NO_AGENT_CAPABILITIES: ClientCapabilities = { roots: {} };

export interface InputRequiredResult {
  resultType: 'input_required';
  inputRequests?: Record<string, { method: string; params?: Record<string, unknown> }>;
  requestState?: string;
  /**
   * Not on the wire: answers Switchboard gave itself (roots the agent cannot give) while the
   * rest goes to the agent; they travel with the sealed state and join the agent's answers.
   */
  answered?: Record<string, unknown>;
}

export function isInputRequired(result: unknown): result is InputRequiredResult {
  return typeof result === 'object' && result !== null && (result as { resultType?: unknown }).resultType === 'input_required';
}

/**
 * The params of a modern-era request: the agent's capabilities in `_meta`, its answers on a retry
 * — an answer to the server's roots question confined to the entry's roots (`entryRoots`), as
 * when Switchboard asks the agent itself (server-traffic.ts).
 */
export function modernParams(params: Record<string, unknown>, agent: AgentOptions | undefined, entryRoots: readonly Root[] = []): Record<string, unknown> {
  const { LOG_LEVEL_META_KEY, CLIENT_CAPABILITIES_META_KEY } = sdk();
  const meta = (params._meta as Record<string, unknown> | undefined) ?? {};
  const { requestState } = agent?.resume ?? {};
  const given = agent?.resume?.inputResponses;
  const inputResponses = given && entryRoots.length > 0 ? Object.fromEntries(Object.entries(given).map(([key, answer]) => [key, confineRootsAnswer(answer, entryRoots)])) : given;
  return {
    ...params,
    ...(inputResponses !== undefined ? { inputResponses } : {}),
    ...(requestState !== undefined ? { requestState } : {}),
    // Roots can always be answered: the agent's own, else the entry's.
    _meta: {
      ...meta,
      ...(agent?.logLevel !== undefined ? { [LOG_LEVEL_META_KEY]: agent.logLevel } : {}),
      // With no agent (a list, a REST call), Switchboard's own MCP Apps declaration (ui-extension.ts).
      [CLIENT_CAPABILITIES_META_KEY]: {
        ...(agent ? agent.capabilities : OWN_UI_CAPABILITIES),
        ...NO_AGENT_CAPABILITIES,
        ...(agent?.capabilities?.roots ? { roots: agent.capabilities.roots } : {}),
      },
    },
  };
}

/**
 * Sends a modern-era request and answers its questions round by round until the server gives a
 * result — or, when the agent relays `input_required` itself, returns the first such result.
 */
export async function withAnswers<T>(
  send: (params: Record<string, unknown>) => Promise<T>,
  params: Record<string, unknown>,
  agent: AgentOptions | undefined,
  traffic: ServerTraffic,
  signal: AbortSignal,
): Promise<T> {
  let next = modernParams(params, agent, traffic.roots);
  for (let round = 0; ; round += 1) {
    const result = await send(next);
    if (!isInputRequired(result)) return result;
    const requests = Object.entries(result.inputRequests ?? {});
    // What the agent can be asked goes to it when it takes input_required itself; the rest
    // (roots it cannot give) Switchboard answers here.
    const relayed = agent?.relayInputRequired ? requests.filter(([, request]) => agentCan(agent, request.method)) : [];
    const local = requests.filter(([key]) => !relayed.some(([relayedKey]) => relayedKey === key));
    if (round >= MAX_INPUT_ROUNDS) {
      const { ProtocolError, ProtocolErrorCode } = sdk();
      throw new ProtocolError(ProtocolErrorCode.InternalError, `The MCP server asked for input ${MAX_INPUT_ROUNDS} times without finishing the request`);
    }
    const answered = await answerAll(local, traffic, signal);
    if (relayed.length > 0) {
      return { ...result, inputRequests: Object.fromEntries(relayed), ...(local.length > 0 ? { answered } : {}) } as T;
    }
    next = {
      ...modernParams(params, agent && { ...agent, resume: undefined }, traffic.roots),
      inputResponses: answered,
      ...(result.requestState !== undefined ? { requestState: result.requestState } : {}),
    };
  }
}

function agentCan(agent: AgentOptions, method: string): boolean {
  const key = method === 'sampling/createMessage' ? 'sampling' : method === 'elicitation/create' ? 'elicitation' : method === 'roots/list' ? 'roots' : undefined;
  return key !== undefined && agent.capabilities?.[key] !== undefined;
}

async function answerAll(
  entries: Array<[string, { method: string; params?: Record<string, unknown> }]>,
  traffic: ServerTraffic,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const answers = await Promise.all(
    entries.map(async ([key, request]) => {
      const method = request.method as AgentRequest;
      if (!AGENT_REQUESTS.includes(method))
        throw new (sdk().ProtocolError)(sdk().ProtocolErrorCode.InvalidRequest, `The MCP server asked for "${request.method}", which no client answers`);
      return [key, await traffic.answer(method, request.params, signal)] as const;
    }),
  );
  return Object.fromEntries(answers);
}
