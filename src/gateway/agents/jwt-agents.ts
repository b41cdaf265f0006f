import type { JWTPayload } from 'jose';
import type { Logger } from 'pino';
import type { JwtAuthConfig } from '../../config/agent-auth-schema.js';
import type { AgentSettings } from '../../config/agent-schema.js';
import type { ErrorCode } from '../../errors.js';
import type { Clock } from '../../util/clock.js';
import { digestOf, isExpired } from './agent-keys.js';
import { agentRefOf, type AgentRef } from './agent-ref.js';
import type { Agent } from './agent-types.js';
import { bothViews, compileAgentView, type AgentView } from './agent-view.js';
import { JwksSource } from './jwks-source.js';
import { agentNameOf, scopeOf } from './jwt-claims.js';
import { verifyJwt } from './jwt-verify.js';

export interface JwtAgentsOptions {
  config: JwtAuthConfig;
  /** Agents of the registry: one with a token's agent name adds its settings (limits, budget, its own view). */
  agents: { get(name: string): Agent | undefined };
  clock: Pick<Clock, 'now'>;
  logger: Pick<Logger, 'warn'>;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
}

/** Who a JWT is: an agent, or the one code saying why not. */
export type JwtAuthentication = { kind: 'agent'; agent: AgentRef } | { kind: 'refused'; code: ErrorCode };

interface Verified {
  name: string;
  claims: Readonly<JWTPayload>;
  /** The claim-derived view, compiled once per token. */
  view: AgentView;
  expiresAt: number;
  /** The ref, built with `settings` (a registry agent's, by identity): rebuilt when they change. */
  ref?: AgentRef;
  settings?: Readonly<AgentSettings>;
}

/** Verified tokens kept (by digest) until they expire, so a token is verified once, not per request. */
const MAX_VERIFIED = 4096;

/**
 * Agents signed in by their identity provider's JWT (issue #40 item 4): verifies the token
 * (jwt-verify.ts, keys from jwks-source.ts), names the agent and compiles its view from the
 * claims (jwt-claims.ts), and joins the settings of a registry agent of the same name — its
 * view narrows the token's, its limits, budget and approvals apply. Nothing of a token is
 * logged or kept in the clear: verified ones are keyed by their SHA-256.
 */
export class JwtAgents {
  readonly keys: JwksSource;
  readonly #options: JwtAgentsOptions;
  readonly #verified = new Map<string, Verified>();

  constructor(options: JwtAgentsOptions) {
    this.#options = options;
    const { jwksUrl, jwksFile } = options.config;
    this.keys = new JwksSource({
      ...(jwksUrl !== undefined ? { url: jwksUrl } : {}),
      ...(jwksFile !== undefined ? { file: jwksFile } : {}),
      clock: options.clock,
      logger: options.logger,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  async authenticate(token: string): Promise<JwtAuthentication> {
    const digest = digestOf(token).toString('hex');
    let verified = this.#verified.get(digest);
    if (verified === undefined) {
      const { config, clock } = this.#options;
      const verdict = await verifyJwt(token, { ...config, keys: this.keys, clock });
      if (!verdict.ok) return { kind: 'refused', code: verdict.code };
      const name = agentNameOf(verdict.claims, config.agent);
      if (name === undefined) return { kind: 'refused', code: 'JWT_AGENT_INVALID' };
      verified = { name, claims: Object.freeze(verdict.claims), view: compileAgentView(scopeOf(verdict.claims, config)), expiresAt: (verdict.claims.exp as number) * 1000 };
      this.#remember(digest, verified);
    } else if (!this.#inTime(verified.expiresAt)) {
      this.#verified.delete(digest);
      return { kind: 'refused', code: 'JWT_EXPIRED' };
    }
    const agent = this.#options.agents.get(verified.name);
    if (agent && isExpired(agent.settings, this.#options.clock.now())) return { kind: 'refused', code: 'KEY_EXPIRED' };
    return { kind: 'agent', agent: this.#refOf(verified, agent) };
  }

  /** Whether a JWT agent may still act (a long-lived feed checks it per event): its token in time, its registry agent not expired. */
  isActive(agent: AgentRef): boolean {
    if (agent.expiresAt === undefined || !this.#inTime(agent.expiresAt)) return false;
    const own = this.#options.agents.get(agent.name);
    return own === undefined || !isExpired(own.settings, this.#options.clock.now());
  }

  #inTime(expiresAt: number): boolean {
    return this.#options.clock.now() < expiresAt + this.#options.config.clockToleranceSeconds * 1000;
  }

  #refOf(verified: Verified, agent: Agent | undefined): AgentRef {
    if (verified.ref && verified.settings === agent?.settings) return verified.ref;
    const own = agent ? agentRefOf(agent).view : undefined;
    const view = own ? bothViews(verified.view, own) : verified.view;
    const ref: AgentRef = { name: verified.name, claims: verified.claims, expiresAt: verified.expiresAt, ...(view.everything ? {} : { view }) };
    verified.ref = ref;
    if (agent) verified.settings = agent.settings;
    else delete verified.settings;
    return ref;
  }

  #remember(digest: string, verified: Verified): void {
    if (this.#verified.size >= MAX_VERIFIED) {
      // Expired ones first; then the oldest (a Map iterates in insertion order).
      for (const [key, entry] of this.#verified) if (!this.#inTime(entry.expiresAt)) this.#verified.delete(key);
      if (this.#verified.size >= MAX_VERIFIED) this.#verified.delete(this.#verified.keys().next().value as string);
    }
    this.#verified.set(digest, verified);
  }
}
