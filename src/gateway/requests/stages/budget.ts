import type { AgentBudgets } from '../../agents/agent-budgets.js';
import { approximateTokens } from '../../results/token-estimate.js';
import type { RequestContext, RequestResult, Stage } from '../pipeline.js';

/** The requests a budget refuses and counts: those that hand the agent a result. */
const COUNTED: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read', 'results/read', 'scripts/run']);

/** The tokens a result hands its agent, as the guard estimates them (token-estimate.ts; sampled above 1 MiB, when the guard is off). */
export function resultTokensOf(result: RequestResult): number {
  return approximateTokens(JSON.stringify(result));
}

/**
 * An agent's token budget (SPEC §19, issue #38 item 4), beside its limits: a request of an agent
 * over its budget is refused with `BUDGET_EXCEEDED` and when it resets; an answered one is
 * counted, as the agent got it (after the result guard, which sits nearer the route). The
 * operator and agents without a budget pass untouched. The check and the count are not one step:
 * requests in flight when the budget runs out still finish, and count.
 */
export function budget(budgets: Pick<AgentBudgets, 'has' | 'check' | 'charge'>): Stage {
  return async (ctx: RequestContext, next: () => Promise<RequestResult>): Promise<RequestResult> => {
    const { agent } = ctx.options;
    if (!agent || !COUNTED.has(ctx.request.method) || !budgets.has(agent.name)) return next();
    await budgets.check(agent.name);
    const result = await next();
    // A script's calls hand the agent nothing: only the script's answer is counted (issue #39).
    if (ctx.options.runId !== undefined) return result;
    await budgets.charge(agent.name, resultTokensOf(result));
    return result;
  };
}
