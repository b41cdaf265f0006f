import { describe, expect, it } from 'vitest';
import { OwnerWatch } from '../../../src/cluster/owner-watch.js';
import { deferred } from '../../../src/util/deferred.js';
import { ManualClock } from '../../helpers/manual-clock.js';

/** Lets the watch's lookups (promises) settle after the clock fired its check. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Replicas by id, live or not; `lookups` counts the watch's questions. */
function replicas(live: Record<string, boolean>) {
  const lookups: string[] = [];
  const find = async (id: string): Promise<unknown> => {
    lookups.push(id);
    if (live[id] === undefined) throw new Error('database away');
    return live[id] ? { url: `http://${id}` } : undefined;
  };
  return { find, lookups, live };
}

describe('OwnerWatch: forwarded requests whose owner stopped beating', () => {
  it('asks once per owner and period however many requests it holds, and ends only the requests of an owner that is not live', async () => {
    const clock = new ManualClock();
    const r = replicas({ a: true, b: true });
    const watch = new OwnerWatch(r.find, 2_000, clock);
    const [a1, a2, b1] = [watch.watch('a'), watch.watch('a'), watch.watch('b')];
    expect(clock.pendingDelays()).toEqual([2_000]);

    clock.advance(2_000);
    await settle();
    expect(r.lookups).toEqual(['a', 'b']);
    expect([a1.gone.aborted, a2.gone.aborted, b1.gone.aborted]).toEqual([false, false, false]);

    r.live.a = false;
    clock.advance(2_000);
    await settle();
    expect([a1.gone.aborted, a2.gone.aborted, b1.gone.aborted]).toEqual([true, true, false]);
    expect(String(a1.gone.reason)).toMatch(/replica a, which holds this request, stopped beating/);
    // A request to `a` from now on is watched afresh (a replica of that id may be back).
    expect(watch.watch('a').gone.aborted).toBe(false);
  });

  it('keeps no timer once every forwarded request is over, and starts one again with the next', async () => {
    const clock = new ManualClock();
    const r = replicas({ a: true });
    const watch = new OwnerWatch(r.find, 2_000, clock);
    const one = watch.watch('a');
    one.release();
    one.release();
    clock.advance(2_000);
    await settle();
    expect(r.lookups).toEqual([]);
    expect(clock.pendingDelays()).toEqual([]);

    watch.watch('a');
    expect(clock.pendingDelays()).toEqual([2_000]);
  });

  it('ends twenty requests to one owner through one listener on its signal (no MaxListeners warning, which fails the test)', async () => {
    const clock = new ManualClock();
    const r = replicas({ a: false });
    const watch = new OwnerWatch(r.find, 2_000, clock);
    const held = Array.from({ length: 20 }, () => watch.watch('a'));
    // As forward-request.ts listens to each: one listener per request's signal.
    let cut = 0;
    for (const h of held) h.gone.addEventListener('abort', () => cut++, { once: true });
    clock.advance(2_000);
    await settle();
    expect(cut).toBe(20);
    expect(r.lookups).toEqual(['a']);
  });

  it('a check that finds the owner gone after its requests ended leaves a request watched since alone, and watches it on', async () => {
    const clock = new ManualClock();
    const answer = deferred<unknown>();
    const lookups: string[] = [];
    const watch = new OwnerWatch((id) => (lookups.push(id), answer.promise), 2_000, clock);
    const before = watch.watch('a');
    clock.advance(2_000);
    before.release();
    const after = watch.watch('a');
    answer.resolve(undefined);
    await settle();
    expect(lookups).toEqual(['a']);
    expect(after.gone.aborted).toBe(false);
    expect(clock.pendingDelays()).toEqual([2_000]);
  });

  it('counts a lookup that does not answer within the period as live, and checks again', async () => {
    const clock = new ManualClock();
    const lookups: string[] = [];
    const watch = new OwnerWatch((id) => (lookups.push(id), new Promise(() => undefined)), 2_000, clock);
    const held = watch.watch('a');
    clock.advance(2_000);
    await settle();
    clock.advance(2_000);
    await settle();
    expect(held.gone.aborted).toBe(false);
    expect(clock.pendingDelays()).toEqual([2_000]);
    clock.advance(2_000);
    await settle();
    expect(lookups).toEqual(['a', 'a']);
  });

  it('does not end anything when the lookup itself fails (the store away): the owner may well run', async () => {
    const clock = new ManualClock();
    const r = replicas({});
    const watch = new OwnerWatch(r.find, 2_000, clock);
    const held = watch.watch('c');
    clock.advance(2_000);
    await settle();
    expect(r.lookups).toEqual(['c']);
    expect(held.gone.aborted).toBe(false);
    expect(clock.pendingDelays()).toEqual([2_000]);
  });
});
