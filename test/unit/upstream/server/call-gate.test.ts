import { describe, expect, it } from 'vitest';
import { isSwitchboardError, SwitchboardError } from '../../../../src/errors.js';
import { CallGate, HARD_QUEUE_BOUND, type Release } from '../../../../src/upstream/server/call-gate.js';
import { ManualClock } from '../../../helpers/manual-clock.js';
import { callThrough, parallelServer, runUntil, seeded, serialServer, settle, type Outcome } from './simulated-server.js';

/**
 * The call gate of one upstream (issues #26 and #35) on the manual clock: slots and a FIFO queue,
 * the adaptive or pinned limit, and a queue bounded by the requests' deadlines (or a pinned
 * `queueSize`). The last block runs simulated servers through a real gate: minutes of traffic in
 * milliseconds, every figure exact.
 */

const timedOut = () => new SwitchboardError('TOOL_CALL_TIMEOUT', 'queued too long');
const wait = (timeoutMs: number) => ({ timeoutMs, timedOut });
const refusal = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (err: unknown) => err,
  );

/** A gate whose server has answered three requests of `serviceMs` each, with every slot then free. */
function gateThatKnows(clock: ManualClock, serviceMs: number, settings: ConstructorParameters<typeof CallGate>[0]): CallGate {
  const gate = new CallGate(settings, clock);
  for (let i = 0; i < 3; i++) (gate.tryEnter() as Release)(serviceMs);
  return gate;
}

/** Takes every free slot, and returns their releases. */
function fill(gate: CallGate): Release[] {
  const held: Release[] = [];
  for (let release = gate.tryEnter(); release; release = gate.tryEnter()) held.push(release);
  return held;
}

describe('CallGate with maxConcurrentCalls pinned', () => {
  it('hands out `limit` slots at once, then queues first in, first out, and records each wait', async () => {
    const clock = new ManualClock(0);
    const gate = new CallGate({ maxConcurrentCalls: 2, queueSize: 10 }, clock);
    expect(gate.limit).toMatchObject({ mode: 'fixed', value: 2, reason: 'pinned by maxConcurrentCalls 2' });
    const a = gate.tryEnter();
    const b = gate.tryEnter();
    expect(a && b).toBeTypeOf('function');
    expect(gate.tryEnter()).toBeUndefined();
    const order: string[] = [];
    const waiting = ['c', 'd', 'e'].map((id) => gate.enter('s', wait(60_000)).then((release) => (order.push(id), release)));
    expect(gate.queued).toBe(3);
    clock.advance(40);
    (a as Release)();
    (a as Release)(); // a second release frees nothing more
    const c = await waiting[0];
    expect(order).toEqual(['c']);
    expect(gate.inFlight).toBe(2);
    (b as Release)();
    (c as Release)();
    await Promise.all(waiting);
    expect(order).toEqual(['c', 'd', 'e']);
    expect(gate.waits.count).toBe(3);
    expect(gate.waits.sumMs).toBe(120);
    // Answers teach a pinned limit nothing.
    expect(gate.limit.value).toBe(2);
  });

  it('refuses a full queue (queueSize pinned) with SERVER_BUSY and a Retry-After of at least a second', async () => {
    const gate = new CallGate({ maxConcurrentCalls: 1, queueSize: 1 }, new ManualClock(0));
    expect(gate).toMatchObject({ queueBound: 1, queueMode: 'fixed' });
    gate.tryEnter();
    void gate.enter('s', wait(1_000)).catch(() => {});
    const refused = await refusal(gate.enter('s', wait(1_000)));
    expect(isSwitchboardError(refused, 'SERVER_BUSY')).toBe(true);
    expect((refused as SwitchboardError).retryAfterMs).toBeGreaterThanOrEqual(1_000);
    expect((refused as Error).message).toBe('MCP server "s" is busy: 1 requests running (limit 1, fixed) and 1 waiting (queueSize 1)');
  });

  it('ends a wait at its deadline or on abort, and the line moves on without it', async () => {
    const clock = new ManualClock(0);
    const gate = new CallGate({ maxConcurrentCalls: 1, queueSize: 5 }, clock);
    const first = gate.tryEnter() as Release;
    const late = refusal(gate.enter('s', wait(100)));
    const controller = new AbortController();
    const gone = refusal(gate.enter('s', { signal: controller.signal, ...wait(10_000) }));
    const last = gate.enter('s', wait(10_000));
    clock.advance(100);
    expect(isSwitchboardError(await late, 'TOOL_CALL_TIMEOUT')).toBe(true);
    controller.abort(new Error('caller left'));
    expect(((await gone) as Error).message).toBe('caller left');
    expect(gate.queued).toBe(1);
    first();
    expect(typeof (await last)).toBe('function');
    expect(clock.pendingDelays()).toEqual([]);
  });
});

describe('CallGate: a queue bounded by deadlines', () => {
  it('admits every request that fits the bound before the server has answered enough to know its pace', async () => {
    const clock = new ManualClock(0);
    const gate = new CallGate({ maxConcurrentCalls: 1 }, clock);
    expect(gate).toMatchObject({ queueBound: HARD_QUEUE_BOUND, queueMode: 'deadline' });
    // Two slow answers are not enough to refuse anyone on.
    for (let i = 0; i < 2; i++) (gate.tryEnter() as Release)(60_000);
    expect(gate.serviceMs).toBeUndefined();
    fill(gate);
    const waiting = Array.from({ length: 20 }, () => gate.enter('s', wait(1)).catch((err: unknown) => err));
    expect(gate.queued).toBe(20);
    clock.advance(1);
    expect((await Promise.all(waiting)).every((err) => isSwitchboardError(err, 'TOOL_CALL_TIMEOUT'))).toBe(true);
  });

  it('refuses at once, with SERVER_BUSY, a request whose expected wait is longer than its deadline; a later deadline waits', async () => {
    const clock = new ManualClock(0);
    const gate = gateThatKnows(clock, 1_000, { maxConcurrentCalls: 2 });
    expect(gate.serviceMs).toBe(1_000);
    const held = fill(gate);
    const queued = Array.from({ length: 4 }, () => gate.enter('s', wait(60_000)));
    // 4 ahead × 1 000 ms ÷ 2 slots: about 2 s.
    const timersBefore = clock.pendingDelays().length;
    const refused = await refusal(gate.enter('s', wait(1_500)));
    expect(isSwitchboardError(refused, 'SERVER_BUSY')).toBe(true);
    expect((refused as SwitchboardError).retryAfterMs).toBe(2_000);
    expect((refused as Error).message).toBe(
      'MCP server "s" is busy: 2 requests running (limit 2, fixed) and 4 waiting; at 1000 ms a request the wait would be about 2000 ms, longer than the 1500 ms left of this request\'s deadline',
    );
    // Refused without a timer, a listener or a place in line.
    expect(clock.pendingDelays()).toHaveLength(timersBefore);
    expect(gate.queued).toBe(4);
    const patient = gate.enter('s', wait(2_500));
    expect(gate.queued).toBe(5);
    // The time queued counts against the deadline: the slots free up after 3 s, later than it.
    clock.advance(2_500);
    expect(isSwitchboardError(await refusal(patient), 'TOOL_CALL_TIMEOUT')).toBe(true);
    for (const release of held) release(1_000);
    await Promise.all(queued.slice(0, 2));
    expect(gate.queued).toBe(2);
  });

  it('refuses at the hard bound of 10 000 waiting, whatever the deadline, before any answer', async () => {
    const gate = new CallGate({ maxConcurrentCalls: 1 }, new ManualClock(0));
    gate.tryEnter();
    const waiting = Array.from({ length: HARD_QUEUE_BOUND }, () => gate.enter('s', wait(600_000)));
    expect(gate.queued).toBe(10_000);
    const refused = await refusal(gate.enter('s', wait(600_000)));
    expect(isSwitchboardError(refused, 'SERVER_BUSY')).toBe(true);
    expect((refused as Error).message).toBe('MCP server "s" is busy: 1 requests running (limit 1, fixed) and 10000 waiting (the bound of 10000)');
    void waiting;
  });

  it('keeps the deadline rule under a pinned queueSize, and refuses at that bound', async () => {
    const clock = new ManualClock(0);
    const gate = gateThatKnows(clock, 500, { maxConcurrentCalls: 1, queueSize: 3 });
    fill(gate);
    const queued = [gate.enter('s', wait(60_000)), gate.enter('s', wait(60_000))];
    // 2 ahead × 500 ms: a deadline of 900 ms cannot be met.
    expect(isSwitchboardError(await refusal(gate.enter('s', wait(900))), 'SERVER_BUSY')).toBe(true);
    queued.push(gate.enter('s', wait(60_000)));
    const full = await refusal(gate.enter('s', wait(60_000)));
    expect((full as Error).message).toMatch(/\(queueSize 3\)$/);
    expect(gate.queued).toBe(3);
  });
});

describe('CallGate with the adaptive limit', () => {
  it('starts at 16, learns only from answered requests, and lets the whole line in at once when the limit grows', async () => {
    const clock = new ManualClock(0);
    const gate = new CallGate({}, clock);
    expect(gate.limit).toMatchObject({ mode: 'adaptive', value: 16 });
    const held = fill(gate);
    expect(held).toHaveLength(16);
    const waiting = Array.from({ length: 3 }, () => gate.enter('s', wait(60_000)));
    // Abandoned: nothing learnt, and its slot goes to the first in line.
    (held.pop() as Release)();
    expect(gate.limit.value).toBe(16);
    expect(gate.queued).toBe(2);
    // Answered while others wait: the limit grows by one, and two slots are free for the two in line.
    (held.pop() as Release)(200);
    expect(gate.limit.value).toBe(17);
    await Promise.all(waiting);
    expect(gate.queued).toBe(0);
    expect(gate.inFlight).toBe(17);
  });
});

describe('CallGate against simulated servers (manual clock)', () => {
  it('a server that serves calls in parallel: 200 concurrent 0.5–6 s calls with the defaults all succeed, most of them at once', async () => {
    const clock = new ManualClock(0);
    const gate = new CallGate({}, clock);
    const server = parallelServer(clock);
    const random = seeded(35);
    const outcomes: Outcome[] = [];
    const calls = Array.from({ length: 200 }, () => callThrough(gate, clock, server, 500 + random() * 5_500).then((o) => outcomes.push(o)));
    await runUntil(clock, () => outcomes.length === 200);
    await Promise.all(calls);
    expect(outcomes).toEqual(Array(200).fill('answered'));
    expect(server.deepest()).toBeGreaterThanOrEqual(150);
    expect(gate.limit.value).toBeGreaterThanOrEqual(150);
    // The last call: 200 calls of 3.25 s on average, in a few of their round trips, not 200 × 3.25 / 16 = 40 s.
    expect(clock.now()).toBeLessThan(15_000);
  });

  it('a server that serves one call at a time: the limit settles at ≤ 4 within 10 s, its own queue never grows past it, and an unmeetable deadline is refused at once', async () => {
    const clock = new ManualClock(0);
    const gate = new CallGate({}, clock);
    const server = serialServer(clock);
    // 30 callers, each calling again as soon as it is answered: 100 ms calls, for 10 s.
    let stop = false;
    let answered = 0;
    const caller = async (): Promise<void> => {
      while (!stop) if ((await callThrough(gate, clock, server, 100)) === 'answered') answered++;
    };
    const callers = Array.from({ length: 30 }, caller);
    await runUntil(clock, () => clock.now() >= 10_000, 5);
    expect(answered).toBeGreaterThanOrEqual(95);
    expect(gate.limit.value).toBeLessThanOrEqual(4);
    expect(gate.limit.reason).toMatch(/^shrank: latency rises with concurrency/);
    // From here on, for another 10 s, the server never holds more than the limit.
    const from = server.depths.length;
    await runUntil(clock, () => clock.now() >= 20_000, 5);
    expect(answered).toBeGreaterThanOrEqual(190);
    expect(Math.max(...server.depths.slice(from))).toBeLessThanOrEqual(4);
    expect(gate.limit.value).toBeLessThanOrEqual(4);

    // 25 or so wait, each about 100 ms per request ahead of it: a deadline of 1 s cannot be met.
    expect(gate.queued).toBeGreaterThan(20);
    const asked = clock.now();
    const refused = callThrough(gate, clock, server, 100, 1_000);
    await settle();
    // Answered without the clock moving: refused at once, not after its second.
    expect(clock.now()).toBe(asked);
    expect(await refused).toBe('SERVER_BUSY');
    stop = true;
    await runUntil(clock, () => gate.inFlight === 0 && gate.queued === 0);
    await Promise.all(callers);
  });
});
