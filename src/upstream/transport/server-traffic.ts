import type { ProtocolError, Root } from '@modelcontextprotocol/client';
import { sdk } from '../sdk.js';
import { ListenerSet } from '../../util/listeners.js';
import { confineRootsAnswer } from './roots.js';

/**
 * What an upstream server sends Switchboard on its own initiative, besides answers: notifications
 * to relay (log messages, list and resource changes) and requests only an agent can answer
 * (sampling, elicitation) or that an agent may answer better (roots). The connection's owner
 * subscribes and, for requests, installs the router that finds the agent (SPEC §7).
 */

export const RELAYED_NOTIFICATIONS = [
  'notifications/message',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
  /** A 2025-11-25 server's own task changed (issue #41: relayed to the agent whose task it is). */
  'notifications/tasks/status',
] as const;
export type RelayedNotification = (typeof RELAYED_NOTIFICATIONS)[number];

export const AGENT_REQUESTS = ['sampling/createMessage', 'elicitation/create', 'roots/list'] as const;
export type AgentRequest = (typeof AGENT_REQUESTS)[number];

/** Answers a request of the server; `undefined` means "answer it the default way" (roots). */
export type AgentRequestHandler = (method: AgentRequest, params: Record<string, unknown> | undefined, signal: AbortSignal) => Promise<Record<string, unknown> | undefined>;

export class ServerTraffic {
  readonly #notifications = new Map<RelayedNotification, ListenerSet<[Record<string, unknown>]>>();
  #handler: AgentRequestHandler | undefined;

  /**
   * `roots`: the server entry's own (issue #36 item 1) — the answer when no agent gives one, and
   * the bounds of an agent's answer when there are any. None: the answer outside a call is empty.
   */
  constructor(
    readonly roots: readonly Root[],
    private readonly onListenerError: (err: unknown) => void,
  ) {}

  on(method: RelayedNotification, listener: (params: Record<string, unknown>) => void): () => void {
    let set = this.#notifications.get(method);
    if (!set) this.#notifications.set(method, (set = new ListenerSet(this.onListenerError)));
    return set.add(listener);
  }

  emit(method: RelayedNotification, params: Record<string, unknown> | undefined): void {
    this.#notifications.get(method)?.emit(params ?? {});
  }

  /** Installs the router for agent requests; returns the function that removes it. */
  route(handler: AgentRequestHandler): () => void {
    this.#handler = handler;
    return () => {
      if (this.#handler === handler) this.#handler = undefined;
    };
  }

  /**
   * Answers a request of the server: through the router when one is installed (an agent's roots
   * confined to the entry's); else roots are the entry's, and sampling or elicitation are refused
   * at once — never left hanging.
   */
  async answer(method: AgentRequest, params: Record<string, unknown> | undefined, signal: AbortSignal): Promise<Record<string, unknown>> {
    const answered = this.#handler ? await this.#handler(method, params, signal) : undefined;
    if (answered !== undefined) return method === 'roots/list' ? confineRootsAnswer(answered, this.roots) : answered;
    if (method === 'roots/list') return { roots: [...this.roots] };
    throw noAgent(method);
  }

  clear(): void {
    this.#notifications.clear();
    this.#handler = undefined;
  }
}

/** The answer when no agent in a call can take a server's request. */
export function noAgent(method: AgentRequest, why = 'no agent call is in progress on this server (a REST call cannot be asked anything)'): ProtocolError {
  const { ProtocolError, ProtocolErrorCode } = sdk();
  return new ProtocolError(ProtocolErrorCode.InvalidRequest, `Switchboard cannot relay ${method}: ${why}`);
}
