import { CLIENT_GONE, type InFlightCalls } from '../in-flight-calls.js';
import { onClientGone } from '../client-gone.js';
import type { RequestContext, RequestResult, Stage } from '../pipeline.js';

/**
 * The request joins the in-flight set (the drain cancels what is left at the end of shutdown's
 * grace; `SHUTTING_DOWN` once it has) and gets its own signal, which the caller's cancellation
 * and a REST client going away abort too. Every listener is removed on the way out.
 */
export function inFlight(calls: InFlightCalls): Stage {
  return async (ctx: RequestContext, next: () => Promise<RequestResult>): Promise<RequestResult> => {
    const { signal, client } = ctx.options;
    const controller = calls.begin();
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    const stopWatchingClient = client ? onClientGone(client, () => controller.abort(CLIENT_GONE)) : undefined;
    ctx.signal = controller.signal;
    try {
      return await next();
    } finally {
      signal?.removeEventListener('abort', onAbort);
      stopWatchingClient?.();
      calls.end(controller);
    }
  };
}
