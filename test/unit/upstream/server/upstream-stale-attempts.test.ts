import { describe, expect, it } from 'vitest';
import { SwitchboardError } from '../../../../src/errors.js';
import { connected, FakeConnection, fakeHost, newUpstream, transitions } from '../../../helpers/fake-upstream.js';

/**
 * Issue #20: each connect attempt of an `Upstream` has a generation; the result of one that a
 * teardown or a newer attempt overtook is dropped (its connection closed, its failure ignored),
 * so it can never attach a connection or change the status. See upstream-state-machine.test.ts
 * for the transitions themselves.
 */

const closed = (message: string) => new SwitchboardError('SERVER_CLOSED', message);

describe('Upstream: stale attempts', () => {
  it('drops a connect that resolves after stop(): the connection is closed, never attached, no `connected`', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const task = upstream.start('startup', { returned: false });
    const attempt = await host.connects.next();
    const waiting = upstream.waitForConnection(undefined, 10_000);

    const stopping = upstream.stop();
    expect(attempt.signal.aborted).toBe(true);
    await expect(waiting).rejects.toMatchObject({ code: 'SERVER_CLOSED' });
    const late = new FakeConnection();
    attempt.resolve(late);
    await stopping;
    await task.done;

    expect(late.closed).toBe(1);
    expect(upstream.connection).toBeUndefined();
    expect(upstream.status).toBe('connecting');
    expect(task.outcome).toBeUndefined();
    expect(transitions(host)).toEqual(['disconnected→connecting']);
    expect(host.notes.filter((note) => note.kind === 'listed')).toEqual([]);

    upstream.markDisconnected();
    expect(transitions(host)).toEqual(['disconnected→connecting', 'connecting→disconnected']);
  });

  it('drops a reconnect attempt overtaken by stop(), and cancels the scheduled one', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const first = await connected(upstream, host);
    first.fireClose(closed('gone'));
    host.clock.advance(100);
    const attempt = await host.connects.next();

    const stopping = upstream.stop();
    attempt.resolve(new FakeConnection());
    await stopping;
    expect(upstream.connection).toBeUndefined();
    expect(upstream).toMatchObject({ attempt: 0, nextRetryAt: undefined });
    expect(host.clock.pendingDelays()).toEqual([]);
    expect(transitions(host)).toEqual(['disconnected→connecting', 'connecting→connected', 'connected→reconnecting']);
  });

  it('drops the failure of an attempt overtaken by a newer one', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const older = upstream.start('startup', { returned: false });
    const olderAttempt = await host.connects.next();
    const newer = upstream.start('reload', { returned: false });
    const newerAttempt = await host.connects.next();

    olderAttempt.reject(new Error('the old attempt failed'));
    await older.done;
    expect(older.outcome).toBeUndefined();
    expect(upstream.status).toBe('connecting');

    const connection = new FakeConnection();
    newerAttempt.resolve(connection);
    await newer.done;
    expect(upstream.connection).toBe(connection);
    expect(transitions(host)).toEqual(['disconnected→connecting', 'connecting→connected']);
  });

  it('drops, and closes, the connection of an older attempt that resolves after a newer one connected', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const older = upstream.start('startup', { returned: false });
    const olderAttempt = await host.connects.next();
    const newer = upstream.start('reload', { returned: false });
    const current = new FakeConnection();
    (await host.connects.next()).resolve(current);
    await newer.done;

    const stale = new FakeConnection();
    olderAttempt.resolve(stale);
    await older.done;
    expect(stale.closed).toBe(1);
    expect(upstream.connection).toBe(current);
    expect(transitions(host)).toEqual(['disconnected→connecting', 'connecting→connected']);
  });
});
