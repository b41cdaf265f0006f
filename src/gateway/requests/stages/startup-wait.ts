import { isSwitchboardError } from '../../../errors.js';
import type { Clock } from '../../../util/clock.js';
import { waitFor } from '../../../util/wait-for.js';
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
    // A failed start still opens the gate: the name is then as unknown as it was.
    const gate = deps.runtime.whenReady().catch(() => undefined);
    await waitFor(gate, { signal: ctx.signal, deadlineMs: ctx.options.timeoutMs || deps.defaultTimeoutMs, clock: deps.clock });
    return next();
  };
}
