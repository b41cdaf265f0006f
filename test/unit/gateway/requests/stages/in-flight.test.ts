import { EventEmitter, getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { CLIENT_GONE, InFlightCalls } from '../../../../../src/gateway/requests/in-flight-calls.js';
import { compose, contextOf, type RequestContext } from '../../../../../src/gateway/requests/pipeline.js';
import { inFlight } from '../../../../../src/gateway/requests/stages/in-flight.js';

/** A REST client's response as the stage sees it: 'close' before the end means the client went away. */
class FakeResponse extends EventEmitter {
  writableEnded = false;
  destroyed = false;
}

/** Runs a request that waits until its own signal aborts; resolves with the context once it is in flight. */
function hanging(calls: InFlightCalls, options: Parameters<typeof contextOf>[1]) {
  let entered!: (ctx: RequestContext) => void;
  const inside = new Promise<RequestContext>((resolve) => (entered = resolve));
  const run = compose([inFlight(calls)], (ctx) => {
    entered(ctx);
    return new Promise((_resolve, reject) => ctx.signal!.addEventListener('abort', () => reject(ctx.signal!.reason as Error), { once: true }));
  });
  const outcome = run(contextOf({ method: 'tools/call', name: 't' }, options)).catch((err: unknown) => err);
  return { inside, outcome };
}

describe('in flight: its own signal, cancelled by the caller, the client or the shutdown', () => {
  it('is counted while it runs and no longer once it ended, leaving no listener on a long-lived caller signal', async () => {
    const calls = new InFlightCalls(new AbortController().signal);
    const session = new AbortController();
    const client = new FakeResponse();
    let during = -1;
    for (let i = 0; i < 20; i += 1) {
      await compose([inFlight(calls)], async () => {
        during = calls.size;
        return {};
      })(contextOf({ method: 'tools/call', name: 't' }, { transport: 'rest', signal: session.signal, client }));
    }
    expect([during, calls.size]).toEqual([1, 0]);
    expect([getEventListeners(session.signal, 'abort').length, client.listenerCount('close')]).toEqual([0, 0]);
  });

  it("is aborted with the caller's reason when the caller's signal aborts, and leaves no listener on it", async () => {
    const calls = new InFlightCalls(new AbortController().signal);
    const caller = new AbortController();
    const { inside, outcome } = hanging(calls, { transport: 'mcp', signal: caller.signal });
    await inside;
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
    caller.abort(new Error('notifications/cancelled'));
    expect(await outcome).toMatchObject({ message: 'notifications/cancelled' });
    expect([getEventListeners(caller.signal, 'abort').length, calls.size]).toEqual([0, 0]);
  });

  it('is aborted with CLIENT_GONE when the REST client goes away before the response ended', async () => {
    const calls = new InFlightCalls(new AbortController().signal);
    const client = new FakeResponse();
    const { inside, outcome } = hanging(calls, { transport: 'rest', client });
    await inside;
    client.emit('close');
    expect(await outcome).toBe(CLIENT_GONE);
    expect(client.listenerCount('close')).toBe(0);
  });

  it('is aborted with SHUTTING_DOWN at the end of the grace, and refused with it afterwards', async () => {
    const shutdown = new AbortController();
    const calls = new InFlightCalls(shutdown.signal);
    const { inside, outcome } = hanging(calls, { transport: 'rest' });
    await inside;
    shutdown.abort();
    expect(await outcome).toMatchObject({ code: 'SHUTTING_DOWN' });
    const late = compose([inFlight(calls)], async () => ({}));
    await expect(late(contextOf({ method: 'tools/call', name: 't' }, { transport: 'rest' }))).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
  });
});
