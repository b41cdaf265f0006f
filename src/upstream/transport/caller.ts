import type { ClientCapabilities } from '@modelcontextprotocol/client';
import type { AgentOptions } from './input-required.js';
import type { AgentRequest } from './server-traffic.js';

/**
 * The agent side of one call in progress on an upstream: where that server's requests
 * (sampling, elicitation, roots) and log messages for the call go (SPEC §7). `/mcp` makes one per
 * call; REST calls have none, so a server asking something during a REST call gets a clear refusal.
 */
export interface CallerChannel {
  /** The agent: its session, or a key of its own for a stateless (2026-07-28) caller. */
  readonly agent: string;
  /** What the agent declared it can be asked. */
  readonly capabilities: ClientCapabilities | undefined;
  /**
   * A 2026-07-28 agent takes a modern server's `input_required` itself, and its retry carries
   * the answers (`resume`); for any other agent Switchboard asks and retries (SPEC §7).
   */
  readonly takesInputRequired: boolean;
  readonly resume?: AgentOptions['resume'];
  /**
   * The least severe log message the agent wants from this request: a 2025 session's
   * `logging/setLevel`, or a 2026-07-28 request's own. A 2026-07-28 server is told it in `_meta`
   * (it sends log messages only to a request that names a level); none, and it sends none.
   */
  readonly logLevel?: string | undefined;
  /** Whether the agent declared the capability the request needs. */
  can(method: AgentRequest): boolean;
  /** Relays the request to the agent and resolves with its answer. */
  request(method: AgentRequest, params: Record<string, unknown> | undefined, signal: AbortSignal): Promise<Record<string, unknown>>;
  /** A log message `server` sent while the call ran, to show the agent. */
  log(server: string, params: Record<string, unknown>): void;
}

/** Which capability a request of the server needs on the agent. */
export function capabilityOf(method: AgentRequest): 'sampling' | 'elicitation' | 'roots' {
  return method === 'sampling/createMessage' ? 'sampling' : method === 'elicitation/create' ? 'elicitation' : 'roots';
}

/** The caller as a modern-era server is told about it. */
export function agentOptionsOf(caller: CallerChannel): AgentOptions {
  return {
    ...(caller.capabilities ? { capabilities: caller.capabilities } : {}),
    relayInputRequired: caller.takesInputRequired,
    ...(caller.resume ? { resume: caller.resume } : {}),
    ...(caller.logLevel !== undefined ? { logLevel: caller.logLevel } : {}),
  };
}
