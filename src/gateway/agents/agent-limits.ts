import { SwitchboardError } from '../../errors.js';

/** An agent's limits (config `agents.<name>.rateLimit` / `maxConcurrentCalls`). */
export interface AgentLimitSettings {
  /** Requests per minute, refilled continuously; `burst` is the bucket's size. */
  rateLimit?: { perMinute: number; burst?: number };
  /** Requests of this agent in flight at once. */
  maxConcurrentCalls?: number;
}

/** A slot taken by `AgentLimiter.enter`; `release()` is idempotent. */
export interface AgentSlot {
  release(): void;
}

const FREE: AgentSlot = { release() {} };

/**
 * Per-agent traffic limits (SPEC §12): a token bucket and a concurrency cap, both checked when a
 * request enters the request path. Over either, the request is refused at once (never queued:
 * the agent decides whether to wait) with `AGENT_RATE_LIMITED` / `AGENT_BUSY`, whose
 * `retryAfterMs` becomes `Retry-After` on REST. State is per agent name and survives a reload
 * that keeps the agent's settings; a change of settings starts a full bucket.
 */
export class AgentLimiter {
  private readonly agents = new Map<string, AgentState>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Takes a token and a concurrency slot for `agent`, or throws. */
  enter(agent: string, settings: AgentLimitSettings): AgentSlot {
    const { rateLimit, maxConcurrentCalls } = settings;
    if (rateLimit === undefined && maxConcurrentCalls === undefined) return FREE;
    const state = this.stateOf(agent, settings);
    if (maxConcurrentCalls !== undefined && state.inFlight >= maxConcurrentCalls) {
      throw limitError('AGENT_BUSY', `Agent ${agent} already has ${maxConcurrentCalls} requests in flight`, 1_000);
    }
    if (rateLimit !== undefined) {
      const now = this.now();
      const capacity = rateLimit.burst ?? rateLimit.perMinute;
      const perMs = rateLimit.perMinute / 60_000;
      state.tokens = Math.min(capacity, state.tokens + (now - state.refilledAt) * perMs);
      state.refilledAt = now;
      if (state.tokens < 1) {
        throw limitError('AGENT_RATE_LIMITED', `Agent ${agent} is over its rate limit of ${rateLimit.perMinute} per minute`, Math.ceil((1 - state.tokens) / perMs));
      }
      state.tokens -= 1;
    }
    state.inFlight += 1;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        state.inFlight -= 1;
      },
    };
  }

  private stateOf(agent: string, settings: AgentLimitSettings): AgentState {
    const key = JSON.stringify([settings.rateLimit ?? null, settings.maxConcurrentCalls ?? null]);
    let state = this.agents.get(agent);
    if (state === undefined || state.key !== key) {
      const capacity = settings.rateLimit === undefined ? 0 : (settings.rateLimit.burst ?? settings.rateLimit.perMinute);
      // A request in flight across a settings change still releases into the new state.
      state = { key, tokens: capacity, refilledAt: this.now(), inFlight: state?.inFlight ?? 0 };
      this.agents.set(agent, state);
    }
    return state;
  }
}

interface AgentState {
  key: string;
  tokens: number;
  refilledAt: number;
  inFlight: number;
}

/** A limit's refusal: `retryAfterMs` says how long to wait (`Retry-After` on REST). */
function limitError(code: 'AGENT_RATE_LIMITED' | 'AGENT_BUSY', message: string, retryAfterMs: number): SwitchboardError {
  return new SwitchboardError(code, message, { retryAfterMs: Math.max(1, retryAfterMs) });
}
