import type { Logger } from 'pino';
import type { JwtAuthConfig } from '../../config/agent-auth-schema.js';
import type { ErrorCode } from '../../errors.js';
import type { Clock } from '../../util/clock.js';
import { agentRefOf, type AgentRef } from './agent-ref.js';
import type { AgentRegistry } from './agent-registry.js';
import type { JwtAgents } from './jwt-agents.js';

/** Who presented a key or JWT, as the gateway sees it (SPEC §12); `refused` carries a JWT's precise code. */
export type Authentication = { kind: 'operator' } | { kind: 'agent'; agent: AgentRef } | { kind: 'unknown' | 'expired' | 'revoked' } | { kind: 'refused'; code: ErrorCode };

export interface CallerAuthOptions {
  agents: Pick<AgentRegistry, 'authenticate' | 'get' | 'isActive' | 'generation'>;
  /** `agentAuth.jwt` (issue #40 item 4): agents signed in by their identity provider's JWT. @default keys only */
  jwt?: JwtAuthConfig;
  clock: Pick<Clock, 'now'>;
  logger: Pick<Logger, 'warn'>;
  /** How the JWKS is fetched. @default globalThis.fetch */
  fetch?: typeof fetch;
}

/** Three base64url parts, the first a JSON object (`eyJ` is `{"`): what is worth verifying as a JWT (keys have no dots). */
const JWT_SHAPE = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Who is calling: the operator's key and agents' `sbk_` keys (the registry, answered at once),
 * then — for a bearer that has a JWT's shape and `agentAuth.jwt` — the identity provider's token,
 * verified asynchronously since its keys may need fetching (jwt-agents.ts).
 */
export class CallerAuth {
  readonly #agents: CallerAuthOptions['agents'];
  #jwt: JwtAgents | undefined;
  /** The JWT side, loaded only with `agentAuth.jwt`: jose costs a few hundred ms of startup on a busy box. */
  readonly #jwtLoading: Promise<JwtAgents> | undefined;

  constructor(options: CallerAuthOptions) {
    this.#agents = options.agents;
    const { jwt, agents, clock, logger, fetch } = options;
    this.#jwtLoading = jwt
      ? import('./jwt-agents.js').then(({ JwtAgents }) => (this.#jwt = new JwtAgents({ config: jwt, agents, clock, logger, ...(fetch ? { fetch } : {}) })))
      : undefined;
    // A failed load answers each JWT through the auth hook's error path; it must not also be an unhandled rejection.
    this.#jwtLoading?.catch(() => undefined);
  }

  /** Agents signed in by JWT, once loaded; absent without `agentAuth.jwt`. */
  get jwt(): JwtAgents | undefined {
    return this.#jwt;
  }

  authenticate(presented: string): Authentication | Promise<Authentication> {
    const verdict = this.#agents.authenticate(presented);
    if (verdict.kind === 'agent') return { kind: 'agent', agent: agentRefOf(verdict.agent) };
    if (verdict.kind === 'unknown' && this.#jwtLoading && JWT_SHAPE.test(presented)) {
      return this.#jwt ? this.#jwt.authenticate(presented) : this.#jwtLoading.then((jwt) => jwt.authenticate(presented));
    }
    return verdict;
  }

  /** Changes whenever who a key is may have changed (the registry's `generation`): a verdict kept from before is stale. */
  get generation(): number {
    return this.#agents.generation;
  }

  /** Whether `agent` may still act (a long-lived feed asks per event): a key's agent not revoked or expired, a JWT's token in time. */
  isActive(agent: AgentRef): boolean {
    return agent.claims !== undefined && this.#jwt ? this.#jwt.isActive(agent) : this.#agents.isActive(agent.name);
  }
}
