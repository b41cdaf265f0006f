import { SwitchboardError } from '../../errors.js';
import type { SharedRateLimits } from '../../store/ports.js';
import { waitFor } from '../../util/wait-for.js';
import type { AgentLimiter, AgentLimitSettings, AgentSlot } from './agent-limits.js';

/** How long a take may wait for the database before this replica limits on its own. */
const TAKE_TIMEOUT_MS = 1_000;

/** What this replica last learnt of an agent's cluster bucket, and its own share while the store is away. */
interface Known {
  settings: string;
  /** The cluster's tokens at `at`, as the store answered. */
  tokens: number;
  at: number;
  replicas: number;
  /** This replica's share since the store went away; undefined while the store answers. */
  local?: { tokens: number; refilledAt: number };
}

/**
 * Per-agent rate limits counted once for the cluster (issue #43 item 1). Each request of an agent
 * with a `rateLimit` takes a token from the agent's bucket in the shared store (one statement,
 * `PgRateLimits`), so replicas behind a round-robin balancer together let through what the limit
 * says. While the store does not answer (down, or slower than a second) each replica limits on
 * its own, conservatively: its share is the cluster's tokens it last saw divided by the live
 * replicas it last counted, refilled at the rate divided the same way — an agent that had used
 * its bucket up stays refused everywhere, and the cluster together never passes the limit. The
 * concurrency cap stays per replica (`AgentLimiter`): calls in flight are this process's own.
 */
export class ClusterRateLimiter {
  readonly #known = new Map<string, Known>();
  /** The live replicas the store last counted, for any agent: an agent never answered for is shared by them too. */
  #replicas = 1;

  constructor(
    private readonly local: AgentLimiter,
    private readonly shared: SharedRateLimits,
    private readonly now: () => number,
  ) {}

  /** Takes a token of the cluster's bucket and a concurrency slot here, or throws. */
  async enter(agent: string, settings: AgentLimitSettings): Promise<AgentSlot> {
    const { rateLimit, ...rest } = settings;
    // The concurrency cap first: a busy agent's refusal spends no token of the cluster.
    const slot = this.local.enter(agent, rest);
    if (rateLimit === undefined) return slot;
    try {
      await this.#take(agent, rateLimit);
      return slot;
    } catch (err) {
      slot.release();
      throw err;
    }
  }

  async #take(agent: string, rateLimit: NonNullable<AgentLimitSettings['rateLimit']>): Promise<void> {
    const capacity = rateLimit.burst ?? rateLimit.perMinute;
    const perMs = rateLimit.perMinute / 60_000;
    const settings = JSON.stringify([rateLimit.perMinute, capacity]);
    const now = this.now();
    // Undefined once the deadline passed; the take may still land: a token spent, never one too many.
    const answer = await waitFor(this.shared.take(agent, settings, capacity, perMs, now), { deadlineMs: TAKE_TIMEOUT_MS });
    let tokens: number;
    if (answer !== undefined) {
      this.#known.set(agent, { settings, tokens: answer.tokens, at: now, replicas: answer.replicas });
      this.#replicas = answer.replicas;
      if (answer.taken) return;
      tokens = answer.tokens;
    } else {
      tokens = this.#takeLocally(agent, settings, capacity, perMs, now);
      if (tokens < 0) return;
    }
    const share = answer === undefined ? (this.#known.get(agent)?.replicas ?? 1) : 1;
    throw new SwitchboardError('AGENT_RATE_LIMITED', `Agent ${agent} is over its rate limit of ${rateLimit.perMinute} per minute`, {
      retryAfterMs: Math.max(1, Math.ceil(((1 - tokens) * share) / perMs)),
    });
  }

  /** A take from this replica's share; answers -1 when taken, else the tokens of the share (under 1). */
  #takeLocally(agent: string, settings: string, capacity: number, perMs: number, now: number): number {
    let known = this.#known.get(agent);
    if (known === undefined || known.settings !== settings) {
      // Never answered for this agent: a full bucket, shared by the replicas last counted (none: itself).
      known = { settings, tokens: capacity, at: now, replicas: known?.replicas ?? this.#replicas };
      this.#known.set(agent, known);
    }
    const n = known.replicas;
    known.local ??= { tokens: known.tokens / n, refilledAt: known.at };
    const share = known.local;
    share.tokens = Math.min(capacity / n, share.tokens + Math.max(0, now - share.refilledAt) * (perMs / n));
    share.refilledAt = Math.max(share.refilledAt, now);
    if (share.tokens < 1) return share.tokens;
    share.tokens -= 1;
    return -1;
  }
}

/**
 * The limits of the request path: per agent name, read from `settingsOf` per request (a rotated
 * key or changed settings apply at once); counted once for the cluster when `shared` is given.
 */
export function agentLimits(
  settingsOf: (agent: string) => AgentLimitSettings,
  local: AgentLimiter,
  shared: SharedRateLimits | undefined,
  now: () => number,
): { enter(agent: { name: string }): AgentSlot | Promise<AgentSlot> } {
  if (shared === undefined) return { enter: (agent) => local.enter(agent.name, settingsOf(agent.name)) };
  const cluster = new ClusterRateLimiter(local, shared, now);
  return { enter: (agent) => cluster.enter(agent.name, settingsOf(agent.name)) };
}
