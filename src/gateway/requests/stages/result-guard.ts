import type { AgentRef } from '../../agents/agent-ref.js';
import { cutResult, resultTokens, surelyWithin } from '../../results/result-guard.js';
import { readAnswerResult, readKept } from '../../results/result-reader.js';
import type { RequestContext, RequestResult, Stage } from '../pipeline.js';

/** Where whole results are kept (store/result-handles.ts). */
export interface KeptResults {
  readonly ttlMs: number;
  put(owner: string, result: Record<string, unknown>, bytes: number): string;
  get(handle: string, reader: string | undefined): Promise<Record<string, unknown>>;
}

export interface ResultGuardDeps {
  /** The cap of a result of `tool` (undefined: a read) for its caller, in tokens; 0 = off (results/result-caps.ts). */
  capOf(tool: string | undefined, agent: AgentRef | undefined): number;
  handles: KeptResults;
}

/** Whose a kept result is: the calling agent's name, or '' for the operator (and a daemon without keys). */
export function ownerOf(agent: AgentRef | undefined): string {
  return agent?.name ?? '';
}

/**
 * The result guard (SPEC §19, issue #38 items 1–3), next to the route: a tool result over the
 * caller's `maxResultTokens` is kept whole under a handle and reaches the agent cut to the cap
 * with a note; a small one passes untouched (the same object). A `results/read` request is
 * answered here from the kept result, guarded by the same cap, and never reaches a server.
 * On REST a cut result also carries `truncated: {handle, totalTokens, shownTokens}`.
 */
export function resultGuard(deps: ResultGuardDeps): Stage {
  return async (ctx: RequestContext, next: () => Promise<RequestResult>): Promise<RequestResult> => {
    const { request, options } = ctx;
    if (request.method === 'results/read') {
      const kept = await deps.handles.get(request.handle, options.agent?.name);
      const cap = deps.capOf(undefined, options.agent) || Number.MAX_SAFE_INTEGER;
      const answer = readKept(kept, request.read, cap);
      return options.transport === 'rest' ? { handle: request.handle, ...answer } : readAnswerResult(request.handle, answer);
    }
    const result = await next();
    if (request.method !== 'tools/call') return result;
    const cap = deps.capOf(request.name, options.agent);
    if (cap <= 0 || surelyWithin(result, cap)) return result;
    const totalTokens = resultTokens(result);
    if (totalTokens <= cap) return result;
    const json = JSON.stringify(result);
    const handle = deps.handles.put(ownerOf(options.agent), result, json.length);
    const rest = options.transport === 'rest';
    const cut = cutResult(result, cap, { handle, totalTokens }, rest ? 'rest' : 'meta-tool', deps.handles.ttlMs);
    return rest ? { ...cut.result, truncated: cut.truncation } : cut.result;
  };
}
