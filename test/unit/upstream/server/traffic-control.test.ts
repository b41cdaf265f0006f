import { describe, expect, it } from 'vitest';
import { loadDaemonConfig } from '../../../../src/config/load.js';
import { isSwitchboardError, SwitchboardError } from '../../../../src/errors.js';
import { parseRetryAfter, MAX_RETRY_AFTER_MS } from '../../../../src/upstream/transport/retry-after.js';
import { BackPressure } from '../../../../src/upstream/server/back-pressure.js';
import { CallGate, type Release } from '../../../../src/upstream/server/call-gate.js';
import { ManualClock } from '../../../helpers/manual-clock.js';
import { makeTree } from '../../config/temp-tree.js';

const timedOut = () => new SwitchboardError('TOOL_CALL_TIMEOUT', 'queued too long');

describe('CallGate', () => {
  it('hands out `limit` slots at once, then queues first in, first out, and records each wait', async () => {
    const clock = new ManualClock(0);
    const gate = new CallGate(2, 10, clock);
    const a = gate.tryEnter();
    const b = gate.tryEnter();
    expect(a && b).toBeTypeOf('function');
    expect(gate.tryEnter()).toBeUndefined();
    const order: string[] = [];
    const waiting = ['c', 'd', 'e'].map((id) => gate.enter('s', { timeoutMs: 60_000, timedOut }).then((release) => (order.push(id), release)));
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
  });

  it('refuses a full queue with SERVER_BUSY and a Retry-After of at least a second', async () => {
    const gate = new CallGate(1, 1, new ManualClock(0));
    gate.tryEnter();
    void gate.enter('s', { timeoutMs: 1_000, timedOut }).catch(() => {});
    const refused = await gate.enter('s', { timeoutMs: 1_000, timedOut }).catch((err: unknown) => err);
    expect(isSwitchboardError(refused, 'SERVER_BUSY')).toBe(true);
    expect((refused as SwitchboardError).retryAfterMs).toBeGreaterThanOrEqual(1_000);
    expect((refused as Error).message).toMatch(/1 requests running \(maxConcurrentCalls 1\) and 1 waiting \(queueSize 1\)/);
  });

  it('ends a wait at its deadline or on abort, and the line moves on without it', async () => {
    const clock = new ManualClock(0);
    const gate = new CallGate(1, 5, clock);
    const first = gate.tryEnter() as Release;
    const late = gate.enter('s', { timeoutMs: 100, timedOut }).catch((err: unknown) => err);
    const controller = new AbortController();
    const gone = gate.enter('s', { signal: controller.signal, timeoutMs: 10_000, timedOut }).catch((err: unknown) => err);
    const last = gate.enter('s', { timeoutMs: 10_000, timedOut });
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

describe('Retry-After', () => {
  it('reads delta-seconds and HTTP dates, caps long pauses, ignores garbage', () => {
    const now = Date.parse('2026-12-03T22:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Thu, 03 Dec 2026 22:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Thu, 03 Dec 2026 21:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('86400', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('keeps the longest pause asked for, and forgets it once it is over', () => {
    const clock = new ManualClock(1_000);
    const pause = new BackPressure(clock);
    pause.pause(2_000);
    pause.pause(500);
    expect(pause.remainingMs()).toBe(2_000);
    expect(pause.until).toBe(3_000);
    clock.advance(2_000);
    expect(pause.remainingMs()).toBe(0);
    expect(pause.until).toBeUndefined();
  });
});

describe('traffic limits in the config', () => {
  it.each([
    [{ maxConcurrentCalls: 0 }, 'maxConcurrentCalls must be a whole number from 1 to 10000'],
    [{ maxConcurrentCalls: 2.5 }, 'maxConcurrentCalls must be a whole number from 1 to 10000'],
    [{ queueSize: -1 }, 'queueSize must be a whole number from 0 to 100000'],
  ])('refuses %j with a clear message', async (content, message) => {
    const t = await makeTree();
    const path = await t.write('sb.json', content);
    const err = await loadDaemonConfig({ path, env: {}, home: t.home }).catch((e: unknown) => e);
    expect(isSwitchboardError(err, 'CONFIG_INVALID')).toBe(true);
    expect((err as Error).message).toContain(message);
  });

  it.each([
    [{ mcpServers: { a: { command: 'x', maxConcurrentCalls: -3 } } }, 'maxConcurrentCalls must be a whole number from 1 to 10000'],
    [{ mcpServers: { a: { command: 'x', queueSize: 'many' } } }, 'queueSize must be a whole number from 0 to 100000'],
  ])('leaves the server of %j out with a clear message (issue #36 item 2)', async (content, message) => {
    const t = await makeTree();
    const path = await t.write('sb.json', content);
    const config = await loadDaemonConfig({ path, env: {}, home: t.home });
    expect(config.mcpServers).toEqual({});
    expect(config.serverIssues.join('\n')).toContain(message);
  });

  it('defaults to 16 slots and a queue of 64', async () => {
    const t = await makeTree();
    const config = await loadDaemonConfig({ path: await t.write('sb.json', {}), env: {}, home: t.home });
    expect(config).toMatchObject({ maxConcurrentCalls: 16, queueSize: 64 });
  });
});
