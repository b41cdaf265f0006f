import type { RequestContext, RequestResult, Terminal } from '../pipeline.js';
import type { RequestRouter, SendOptions } from '../request-router.js';

/**
 * The end of the path: the router finds the server that owns what the request names — outside
 * the agent's view a name is unknown (issue #22) — and sends it through that server's
 * `Upstream.request`, holding a tool call first when the approval stage asks it to.
 */
export function route(router: Pick<RequestRouter, 'send'>): Terminal {
  return (ctx: RequestContext): Promise<RequestResult> => {
    const { options } = ctx;
    const send: SendOptions = {};
    if (ctx.signal) send.signal = ctx.signal;
    if (options.timeoutMs !== undefined) send.timeoutMs = options.timeoutMs;
    if (options.onProgress) send.onProgress = options.onProgress;
    if (options.caller) send.caller = options.caller;
    if (ctx.span) send.trace = ctx.span;
    if (options.agent?.view) send.view = options.agent.view;
    if (ctx.hold) send.hold = ctx.hold;
    return router.send(ctx.request, send);
  };
}
