import { isSwitchboardError } from '../../../errors.js';
import type { Clock } from '../../../util/clock.js';
import type { StartupState } from '../../lists/startup-wait.js';
import type { RequestContext, RequestResult, Stage } from '../pipeline.js';
import { NOT_FOUND } from './observe.js';

export interface StartupWaitDeps {
  runtime: StartupState;
  clock: Clock;
  /** How long a request without a `timeoutMs` of its own waits for the gate (the default call timeout). */
  defaultTimeoutMs: number;
}

/**
 * Before the startup gate a name may not be listed yet (SPEC §1.4): a request that finds nothing
 * while the daemon is still starting waits for the gate, within its own deadline, and is routed
 * once more. After the gate, unknown means unknown.
 */
export function startupWait(deps: StartupWaitDeps): Stage {
  return async (ctx: RequestContext, next: () => Promise<RequestResult>): Promise<RequestResult> => {
    try {
      return await next();
    } catch (err) {
      if (deps.runtime.state !== 'starting' || !NOT_FOUND.some((code) => isSwitchboardError(err, code))) throw err;
    }
    await gateOrDeadline(deps, ctx.options.timeoutMs || deps.defaultTimeoutMs, ctx.signal);
    return next();
  };
}

/** Resolves at the gate or when `ms` passed on the clock, whichever is first; rejects when `signal` aborts. */
function gateOrDeadline(deps: StartupWaitDeps, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<void>((resolve, reject) => {
    const done = (): void => {
      deps.clock.clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = (): void => {
      done();
      reject(signal?.reason as Error);
    };
    const settle = (): void => {
      done();
      resolve();
    };
    const timer = deps.clock.setTimeout(settle, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
    // A failed start still opens the gate: the name is then as unknown as it was.
    deps.runtime.whenReady().then(settle, settle);
  });
}
