import type { AgentSlot } from '../../agents/agent-limits.js';
import type { AgentRef } from '../../agents/agent-ref.js';
import type { RequestContext, RequestResult, Stage } from '../pipeline.js';

/** Per-agent rate limit and concurrency cap: a slot per request of an agent, or a refusal. */
export interface AgentLimits {
  enter(agent: AgentRef): AgentSlot | Promise<AgentSlot>;
}

/**
 * An agent's request takes a slot of its limits (SPEC §12) for as long as it runs, or is refused
 * at once (`AGENT_RATE_LIMITED`, `AGENT_BUSY`). The operator's requests have no limits; an
 * unsubscribe only releases what the agent holds, so it is never refused.
 */
export function agentLimit(limits: AgentLimits): Stage {
  return async (ctx: RequestContext, next: () => Promise<RequestResult>): Promise<RequestResult> => {
    const { agent } = ctx.options;
    // A script takes no slot itself (its admission is per agent, scripts/): each of its calls takes one.
    if (!agent || ctx.request.method === 'resources/unsubscribe' || ctx.request.method === 'scripts/run') return next();
    const slot = await limits.enter(agent);
    try {
      return await next();
    } finally {
      slot.release();
    }
  };
}
