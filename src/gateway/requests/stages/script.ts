import type { RequestContext, RequestResult, Stage } from '../pipeline.js';

/** Runs a code-mode script (issue #39): the gateway's, which makes each inner call a request of its own. */
export type ScriptRunner = (ctx: RequestContext) => Promise<RequestResult>;

/**
 * A `scripts/run` request is answered here, after the in-flight stage (so the caller's
 * cancellation, a REST client going away and the shutdown stop the script and its calls), and
 * never routed. Each call the script makes goes through the whole path again, with the run's id.
 */
export function script(run: ScriptRunner): Stage {
  return (ctx: RequestContext, next: () => Promise<RequestResult>): Promise<RequestResult> => (ctx.request.method === 'scripts/run' ? run(ctx) : next());
}
