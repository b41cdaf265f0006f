import type { Logger } from 'pino';
import type { JwtAuthConfig } from '../../config/agent-auth-schema.js';
import type { ErrorCode } from '../../errors.js';
import type { Clock } from '../../util/clock.js';
import { agentRefOf, type AgentRef } from './agent-ref.js';
import type { AgentRegistry } from './agent-registry.js';
import { JwtAgents } from './jwt-agents.js';

/** Who presented a key or JWT, as the gateway sees it (SPEC §12); `refused` carries a JWT's precise code. */
export type Authentication =
  | { kind: 'operator' }
  | { kind: 'agent'; agent: AgentRef }
  | { kind: 'unknown' | 'expired' | 'revoked' }
  | { kind: 'refused'; code: ErrorCode };

export interface CallerAuthOptions {
  agents: Pick<AgentRegistry, 'authenticate' | 'get' | 'isActive'>;
  /** `agentAuth.jwt` (issue #40 item 4): agents signed in by their identity provider's JWT. @default keys only */
  jwt?: JwtAuthConfig;
  clock: Pick<Clock, 'now'>;
  logger: Pick<Logger, 'warn'>;
  /** How the JWKS is fetched. @default globalThis.fetch */
  fetch?: typeof fetch;
}

/**
 * Who is calling: the operator's key and agents' `sbk_` keys (the registry, answered at once),
 * then — for a bearer that has a JWT's shape and `agentAuth.jwt` — the identity provider's token,
 * verified asynchronously since its keys may need fetching (jwt-agents.ts).
 */
export class CallerAuth {
  /** Agents signed in by JWT; absent without `agentAuth.jwt`. */
  readonly jwt: JwtAgents | undefined;
  readonly #agents: CallerAuthOptions['agents'];

  constructor(options: CallerAuthOptions) {
    this.#agents = options.agents;
    const { jwt, agents, clock, logger, fetch } = options;
    this.jwt = jwt ? new JwtAgents({ config: jwt, agents, clock, logger, ...(fetch ? { fetch } : {}) }) : undefined;
  }

  authenticate(presented: string): Authentication | Promise<Authentication> {
    const verdict = this.#agents.authenticate(presented);
    if (verdict.kind === 'agent') return { kind: 'agent', agent: agentRefOf(verdict.agent) };
    if (verdict.kind === 'unknown' && this.jwt?.accepts(presented)) return this.jwt.authenticate(presented);
    return verdict;
  }

  /** Whether `agent` may still act (a long-lived feed asks per event): a key's agent not revoked or expired, a JWT's token in time. */
  isActive(agent: AgentRef): boolean {
    return agent.claims !== undefined && this.jwt ? this.jwt.isActive(agent) : this.#agents.isActive(agent.name);
  }
}
