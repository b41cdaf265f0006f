import { describe, expect, it } from 'vitest';
import { SwitchboardError } from '../../../../../src/errors.js';
import { compose, contextOf, type RequestContext } from '../../../../../src/gateway/requests/pipeline.js';
import { startupWait } from '../../../../../src/gateway/requests/stages/startup-wait.js';
import { deferred } from '../../../../../src/util/deferred.js';
import { ManualClock } from '../../../../helpers/manual-clock.js';

const call = { method: 'tools/call', name: 'late_tool' } as const;

/** Lets every promise already settled run its callbacks (one turn of the event loop; no time passes on the clock). */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A path whose route knows the tool only once `known` is true. */
function gated(state: 'starting' | 'ready') {
  const clock = new ManualClock();
  const gate = deferred<void>();
  const runtime = { state: state as string, whenReady: () => gate.promise };
  let known = false;
  let sends = 0;
  const run = compose([startupWait({ runtime, clock, defaultTimeoutMs: 60_000 })], () => {
    sends += 1;
    return known ? Promise.resolve({ sent: sends }) : Promise.reject(new SwitchboardError('TOOL_NOT_FOUND', 'No tool named "late_tool"'));
  });
  return { clock, gate, runtime, run, learn: () => void (known = true), sends: () => sends };
}

describe('startup wait: a name not listed yet while starting is routed again after the gate', () => {
  it('waits for the gate, then routes once more and answers', async () => {
    const { gate, run, learn, sends } = gated('starting');
    const answer = run(contextOf(call, { transport: 'rest' }));
    await settled();
    expect(sends()).toBe(1);
    learn();
    gate.resolve();
    expect(await answer).toEqual({ sent: 2 });
  });

  it('after the gate, unknown means unknown: no wait, no second try', async () => {
    const { run, sends } = gated('ready');
    await expect(run(contextOf(call, { transport: 'rest' }))).rejects.toMatchObject({ code: 'TOOL_NOT_FOUND' });
    expect(sends()).toBe(1);
  });

  it("waits no longer than the request's own deadline on the clock, then answers what the route says", async () => {
    const { clock, run, sends } = gated('starting');
    const answer = run(contextOf(call, { transport: 'rest', timeoutMs: 5_000 })).catch((err: unknown) => err);
    await settled();
    expect(clock.pendingDelays()).toEqual([5_000]);
    clock.advance(4_999);
    expect(sends()).toBe(1);
    clock.advance(1);
    expect(await answer).toMatchObject({ code: 'TOOL_NOT_FOUND' });
    expect([sends(), clock.pendingDelays()]).toEqual([2, []]);
  });

  it('uses the default call timeout without a deadline of its own, and a failed start opens the gate too', async () => {
    const { clock, gate, run, learn } = gated('starting');
    const answer = run(contextOf(call, { transport: 'mcp' }));
    await settled();
    expect(clock.pendingDelays()).toEqual([60_000]);
    learn();
    gate.reject(new Error('discovery failed'));
    expect(await answer).toEqual({ sent: 2 });
    expect(clock.pendingDelays()).toEqual([]);
  });

  it("gives up with the request's abort reason when it is cancelled while waiting", async () => {
    const { run, clock } = gated('starting');
    const controller = new AbortController();
    const own = (ctx: RequestContext, next: () => Promise<Record<string, unknown>>) => {
      ctx.signal = controller.signal;
      return next();
    };
    const answer = compose([own, (ctx, next) => next()], (ctx) => run(ctx))(contextOf(call, { transport: 'rest' })).catch((err: unknown) => err);
    await settled();
    controller.abort(new Error('client gone'));
    expect(await answer).toMatchObject({ message: 'client gone' });
    expect(clock.pendingDelays()).toEqual([]);
  });

  it('lets every other error through untouched, starting or not', async () => {
    const clock = new ManualClock();
    const runtime = { state: 'starting', whenReady: () => new Promise<never>(() => undefined) };
    const busy = new SwitchboardError('SERVER_BUSY', 'busy', { retryAfterMs: 5 });
    const run = compose([startupWait({ runtime, clock, defaultTimeoutMs: 1 })], () => Promise.reject(busy));
    await expect(run(contextOf(call, { transport: 'rest' }))).rejects.toBe(busy);
    expect(clock.pendingDelays()).toEqual([]);
  });
});
