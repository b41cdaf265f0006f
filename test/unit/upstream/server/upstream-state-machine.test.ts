import { SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { SwitchboardError } from '../../../../src/errors.js';
import { connected, FakeConnection, fakeHost, newUpstream, reached, transitions } from '../../../helpers/fake-upstream.js';
import { loadSdk } from '../../../../src/upstream/sdk.js';

// The daemon loads the SDK client with its first connection (src/upstream/sdk.ts); here the
// functions under test meet the SDK's values without one.
beforeAll(() => loadSdk());

/**
 * Issue #20: the `Upstream` state machine (SPEC §6) driven by its input events alone — connects
 * that succeed or fail, a transport that closes, failures reported by requests, pings — on a
 * manual clock with the backoff jitter pinned. Every status change the host hears of is asserted
 * as the exact list of transitions.
 */

const closed = (message: string) => new SwitchboardError('SERVER_CLOSED', message);
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
const sessionGone = () => new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, 'Error POSTing to endpoint: Session not found', { status: 404, statusText: 'Not Found' });

describe('Upstream: the first connect', () => {
  it('goes disconnected → connecting → connected, lists the tools and arms no timer', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    expect(upstream.status).toBe('disconnected');

    const task = upstream.start('startup', { returned: false });
    expect(upstream.status).toBe('connecting');
    expect(upstream.pending).toBe(true);
    const connection = new FakeConnection();
    (await host.connects.next()).resolve(connection);
    await task.done;

    expect(task.outcome).toEqual({ ok: true });
    expect(upstream).toMatchObject({ status: 'connected', connection, connectedSince: host.clock.now(), lastError: undefined, attempt: 0, restarts: 0 });
    expect(transitions(host)).toEqual(['disconnected→connecting', 'connecting→connected']);
    expect(host.changes.all[1]).toMatchObject({ server: 'up', error: undefined, attempt: 0, nextRetryAt: undefined, restarts: 0 });
    expect(host.notes).toContainEqual({ kind: 'listed', cause: 'startup' });
    // Pings are off (interval 0) and nothing is scheduled.
    expect(host.clock.pendingDelays()).toEqual([]);
    await expect(upstream.waitForConnection(undefined, 100)).resolves.toBe(connection);
  });

  it('goes connecting → failed on a connect error, keeping its code; its tools are dropped and nothing retries', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const task = upstream.start('startup', { returned: false });
    (await host.connects.next()).reject(new SwitchboardError('UPSTREAM_TIMEOUT', 'initialize took longer than 30000 ms'));
    await task.done;

    const error = { code: 'UPSTREAM_TIMEOUT', message: 'initialize took longer than 30000 ms' };
    expect(task.outcome).toEqual({ ok: false, error });
    expect(upstream.status).toBe('failed');
    expect(upstream.lastError).toEqual(error);
    expect(transitions(host)).toEqual(['disconnected→connecting', 'connecting→failed']);
    expect(host.changes.all[1]?.error).toEqual(error);
    expect(host.notes).toContainEqual({ kind: 'dropTools', cause: 'startup' });
    expect(host.clock.pendingDelays()).toEqual([]);
    await expect(upstream.waitForConnection(undefined, 100)).rejects.toMatchObject({ code: 'SERVER_NOT_CONNECTED' });
  });

  it('names an error without a code of its own UPSTREAM_CONNECT_FAILED', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const task = upstream.start('startup', { returned: false });
    (await host.connects.next()).reject(new Error('spawn nope ENOENT'));
    await task.done;
    expect(upstream.lastError).toEqual({ code: 'UPSTREAM_CONNECT_FAILED', message: 'spawn nope ENOENT' });
  });

  it('goes connecting → needs_auth on UPSTREAM_AUTH_REQUIRED: tools held for the sign-in, no retry, callers told why', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const task = upstream.start('startup', { returned: false });
    const waiting = upstream.waitForConnection(undefined, 10_000);
    (await host.connects.next()).reject(new SwitchboardError('UPSTREAM_AUTH_REQUIRED', 'sign in to "up"'));
    await task.done;
    await expect(waiting).rejects.toMatchObject({ code: 'UPSTREAM_AUTH_REQUIRED', message: 'sign in to "up"' });

    expect(upstream.status).toBe('needs_auth');
    expect(transitions(host)).toEqual(['disconnected→connecting', 'connecting→needs_auth']);
    expect(host.notes).toContainEqual({ kind: 'holdForSignIn', cause: 'startup' });
    expect(host.notes.some((note) => note.kind === 'dropTools')).toBe(false);
    // The waiter's own deadline went with it; no retry is scheduled.
    expect(host.clock.pendingDelays()).toEqual([]);
    await expect(upstream.waitForConnection(undefined, 100)).rejects.toMatchObject({ code: 'UPSTREAM_AUTH_REQUIRED' });
  });
});

describe('Upstream: losing the connection and coming back', () => {
  it('goes connected → reconnecting when the transport closes (attempt 1 after the jittered backoff), then → connected', async () => {
    // random 0.75 scales each delay by 1.1 (jitter 0.2): 110 ms for the first attempt.
    const host = fakeHost(0.75);
    const upstream = newUpstream(host);
    const first = await connected(upstream, host);
    const lostAt = host.clock.now();

    first.fireClose(closed('process exited with code 3'));

    expect(upstream.status).toBe('reconnecting');
    expect(upstream.connection).toBeUndefined();
    expect(upstream).toMatchObject({ attempt: 1, nextRetryAt: lostAt + 110 });
    expect(host.changes.all.at(-1)).toMatchObject({
      previous: 'connected',
      status: 'reconnecting',
      attempt: 1,
      nextRetryAt: lostAt + 110,
      error: { code: 'SERVER_CLOSED', message: 'process exited with code 3' },
    });
    expect(host.notes).toContainEqual({ kind: 'markStale' });
    expect(host.clock.pendingDelays()).toEqual([110]);

    host.clock.advance(109);
    expect(host.clock.pendingDelays()).toEqual([1]);
    host.clock.advance(1);
    const attempt = await host.connects.next();
    // Never two of the same server at once: the lost one is closed before the next attempt.
    expect(first.closed).toBe(1);
    const second = new FakeConnection();
    attempt.resolve(second);

    const back = await reached(host, 'connected');
    expect(back).toMatchObject({ previous: 'reconnecting', error: undefined, attempt: 0, nextRetryAt: undefined, restarts: 1 });
    expect(upstream).toMatchObject({ connection: second, lastError: undefined, attempt: 0, nextRetryAt: undefined, restarts: 1 });
    expect(host.notes).toContainEqual({ kind: 'listed', cause: 'reconnect' });
    expect(transitions(host)).toEqual(['disconnected→connecting', 'connecting→connected', 'connected→reconnecting', 'reconnecting→connected']);
    expect(host.clock.pendingDelays()).toEqual([]);
  });

  it('doubles the backoff across failed reconnect attempts, and starts over once connected', async () => {
    const host = fakeHost(0.75);
    const upstream = newUpstream(host);
    let connection = await connected(upstream, host);
    connection.fireClose(closed('gone'));
    expect((await reached(host, 'reconnecting')).attempt).toBe(1);

    const seen: Array<[number, number | undefined]> = [];
    for (const delay of [110, 220]) {
      expect(host.clock.pendingDelays()).toEqual([delay]);
      host.clock.advance(delay);
      (await host.connects.next()).reject(refused());
      const again = await reached(host, 'reconnecting');
      expect(again).toMatchObject({ previous: 'reconnecting', error: { code: 'UPSTREAM_CONNECT_FAILED', message: 'connect ECONNREFUSED 127.0.0.1:1' } });
      seen.push([again.attempt, (again.nextRetryAt as number) - host.clock.now()]);
    }
    expect(seen).toEqual([
      [2, 220],
      [3, 440],
    ]);

    host.clock.advance(440);
    connection = new FakeConnection();
    (await host.connects.next()).resolve(connection);
    await reached(host, 'connected');
    connection.fireClose(closed('gone again'));
    expect(host.changes.all.at(-1)).toMatchObject({ status: 'reconnecting', attempt: 1, nextRetryAt: host.clock.now() + 110 });
    expect(transitions(host)).toEqual([
      'disconnected→connecting',
      'connecting→connected',
      'connected→reconnecting',
      // A repeated `reconnecting` is news: it carries the next attempt and its time.
      'reconnecting→reconnecting',
      'reconnecting→reconnecting',
      'reconnecting→connected',
      'connected→reconnecting',
    ]);
  });

  it('suspends after more than crashLimit crashes within crashWindowMs: failed SERVER_SUSPENDED, no timer left', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host, { crashLimit: 2, crashWindowMs: 10_000 });
    let connection = await connected(upstream, host);
    for (const crash of [1, 2]) {
      connection.fireClose(closed(`crash ${crash}`));
      expect(upstream.status).toBe('reconnecting');
      host.clock.advance(100);
      connection = new FakeConnection();
      (await host.connects.next()).resolve(connection);
      await reached(host, 'connected');
    }

    connection.fireClose(closed('crash 3'));

    expect(upstream.status).toBe('failed');
    expect(upstream.lastError?.code).toBe('SERVER_SUSPENDED');
    expect(upstream.lastError?.message).toMatch(/crashed too many times \(3 times within 10 s\).*Last failure: crash 3/);
    expect(host.changes.all.at(-1)).toMatchObject({ previous: 'connected', status: 'failed', error: { code: 'SERVER_SUSPENDED' }, attempt: 0, nextRetryAt: undefined });
    expect(host.clock.pendingDelays()).toEqual([]);
    await expect(upstream.waitForConnection(undefined, 1000)).rejects.toMatchObject({ code: 'SERVER_SUSPENDED' });
    expect(transitions(host).slice(-2)).toEqual(['reconnecting→connected', 'connected→failed']);
  });

  it('does not suspend crashes spread wider than the crash window', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host, { crashLimit: 2, crashWindowMs: 10_000 });
    let connection = await connected(upstream, host);
    for (const crash of [1, 2, 3, 4]) {
      connection.fireClose(closed(`crash ${crash}`));
      expect(upstream.status).toBe('reconnecting');
      host.clock.advance(100);
      connection = new FakeConnection();
      (await host.connects.next()).resolve(connection);
      await reached(host, 'connected');
      host.clock.advance(6_000);
    }
    expect(upstream.status).toBe('connected');
  });

  it('reconnects at once, counting no crash, when the server forgot the session (HTTP 404)', async () => {
    const host = fakeHost();
    // Three crashes would suspend it (limit 2); three expired sessions must not.
    const upstream = newUpstream(host, { crashLimit: 2 });
    let connection = await connected(upstream, host);
    for (let i = 0; i < 3; i++) {
      expect(upstream.reportFailure(connection, sessionGone())).toBe('session-expired');
      expect(host.changes.all.at(-1)).toMatchObject({
        previous: 'connected',
        status: 'reconnecting',
        attempt: 1,
        nextRetryAt: host.clock.now(),
        error: { code: 'UPSTREAM_SESSION_EXPIRED' },
      });
      expect(host.clock.pendingDelays()).toEqual([0]);
      host.clock.advance(0);
      connection = new FakeConnection();
      (await host.connects.next()).resolve(connection);
      await reached(host, 'connected');
    }
    expect(upstream.status).toBe('connected');
  });

  it('keeps the connection when a request failed with an answer of the server (kind "other")', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const connection = await connected(upstream, host);
    expect(upstream.reportFailure(connection, new Error('MCP error -32602: Unknown tool'))).toBe('other');
    expect(upstream.connection).toBe(connection);
    expect(transitions(host)).toEqual(['disconnected→connecting', 'connecting→connected']);
  });

  it('ignores a failure reported on a connection that is no longer the live one', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const first = await connected(upstream, host);
    first.fireClose(closed('gone'));
    host.clock.advance(100);
    const second = new FakeConnection();
    (await host.connects.next()).resolve(second);
    await reached(host, 'connected');

    expect(upstream.reportFailure(first, closed('late news of the old connection'))).toBe('connection-lost');
    expect(upstream.status).toBe('connected');
    expect(upstream.connection).toBe(second);
  });

  it('goes connected → needs_auth when the server refuses the credentials mid-life: connection closed, nothing scheduled', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const connection = await connected(upstream, host);
    expect(upstream.reportFailure(connection, new SwitchboardError('UPSTREAM_AUTH_REQUIRED', 'the grant was revoked'))).toBe('auth-required');
    expect(upstream.status).toBe('needs_auth');
    expect(upstream.connection).toBeUndefined();
    expect(connection.closed).toBe(1);
    expect(host.notes).toContainEqual({ kind: 'holdForSignIn', cause: 'reconnect' });
    expect(host.clock.pendingDelays()).toEqual([]);
    expect(transitions(host).at(-1)).toBe('connected→needs_auth');
  });

  it('treats a ping timeout as a lost connection (a crash) and reconnects', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host, { pingIntervalMs: 1_000 });
    const connection = await connected(upstream, host);
    expect(host.clock.pendingDelays()).toEqual([1_000]);
    connection.pingAnswer = () => Promise.reject(new SwitchboardError('UPSTREAM_PING_TIMEOUT', 'no answer to ping within 100 ms'));
    host.clock.advance(1_000);
    const lost = await reached(host, 'reconnecting');
    expect(lost).toMatchObject({ previous: 'connected', attempt: 1, error: { code: 'UPSTREAM_PING_TIMEOUT' } });
    expect(host.clock.pendingDelays()).toEqual([100]);
  });

  it('stays disconnected after a loss when health is off', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host, { enabled: false });
    const connection = await connected(upstream, host);
    connection.fireClose(closed('process exited with code 1'));
    expect(upstream.status).toBe('disconnected');
    expect(upstream.lastError).toEqual({ code: 'SERVER_CLOSED', message: 'process exited with code 1' });
    expect(host.clock.pendingDelays()).toEqual([]);
    expect(transitions(host)).toEqual(['disconnected→connecting', 'connecting→connected', 'connected→disconnected']);
    await expect(upstream.waitForConnection(undefined, 100)).rejects.toMatchObject({ code: 'SERVER_NOT_CONNECTED' });
  });
});
