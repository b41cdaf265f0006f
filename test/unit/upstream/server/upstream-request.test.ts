import { SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { SwitchboardError } from '../../../../src/errors.js';
import type { CallerChannel } from '../../../../src/upstream/transport/caller.js';
import type { UpstreamRequestOptions } from '../../../../src/upstream/server/upstream-request.js';
import { connected, FakeConnection, fakeHost, newUpstream, reached, type FakeHost, type HostNote } from '../../../helpers/fake-upstream.js';
import { loadSdk } from '../../../../src/upstream/sdk.js';

// The daemon loads the SDK client with its first connection (src/upstream/sdk.ts); here the
// functions under test meet the SDK's values without one.
beforeAll(() => loadSdk());

/**
 * Issue #20: the one request path (`Upstream.request` → `requestThroughUpstream`, SPEC §6–§7)
 * against the real state machine, with the server's connects and answers under the test's
 * control and time on a manual clock: the wait for a connection inside the deadline, what a
 * failure does to the server and whether the request is sent again.
 */

const closed = (message: string) => new SwitchboardError('SERVER_CLOSED', message);
/** What undici throws for a request whose connection could not be made: it never left. */
const refused = () => Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) });
const sessionGone = () => new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, 'Error POSTing to endpoint: Session not found', { status: 404, statusText: 'Not Found' });

const TOOL: UpstreamRequestOptions = { timeoutMs: 10_000, replaySafe: false, label: 'Tool "send_mail"' };

/** Settles to the result or the error, so a test can assert either without an unhandled rejection. */
function settled<T>(promise: Promise<T>): Promise<{ ok: T } | { err: unknown }> {
  return promise.then(
    (ok) => ({ ok }),
    (err: unknown) => ({ err }),
  );
}

/** Lets the scheduled reconnect run and connects it with a fresh fake connection. */
async function reconnect(host: FakeHost, afterMs: number): Promise<FakeConnection> {
  host.clock.advance(afterMs);
  const connection = new FakeConnection();
  (await host.connects.next()).resolve(connection);
  await reached(host, 'connected');
  return connection;
}

describe('Upstream.request: waiting for a connection', () => {
  it('waits for a reconnecting server and sends once it is back, with what is left of the one deadline', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const first = await connected(upstream, host);
    first.fireClose(closed('gone'));

    const result = upstream.request('tools/call', { name: 'echo', arguments: { text: 'hi' } }, { ...TOOL, timeoutMs: 1_000 });
    // The reconnect in 100 ms and the request's deadline in 1 s, both on the manual clock.
    expect(host.clock.pendingDelays()).toEqual([100, 1_000]);
    const second = await reconnect(host, 100);
    const sent = await second.sent.next();
    expect(sent).toMatchObject({ method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } });
    expect(sent.opts.timeoutMs).toBe(900);
    sent.answer.resolve({ content: [{ type: 'text', text: 'hi' }] });

    await expect(result).resolves.toEqual({ content: [{ type: 'text', text: 'hi' }] });
    expect(first.sent.all).toEqual([]);
    // The wait's timer went with the wait.
    expect(host.clock.pendingDelays()).toEqual([]);
  });

  it('times out on the manual clock with TOOL_CALL_TIMEOUT when the server is not back within the deadline', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host, { backoff: { baseMs: 5_000, maxMs: 10_000, jitter: 0 } });
    const first = await connected(upstream, host);
    first.fireClose(closed('process exited with code 3'));

    const outcome = settled(upstream.request('prompts/get', { name: 'greet' }, { timeoutMs: 500, replaySafe: true, label: 'prompts/get "greet"' }));
    expect(host.clock.pendingDelays()).toEqual([500, 5_000]);
    host.clock.advance(499);
    expect(host.clock.pendingDelays()).toEqual([1, 4_501]);
    host.clock.advance(1);

    const { err } = (await outcome) as { err: SwitchboardError };
    expect(err).toBeInstanceOf(SwitchboardError);
    expect(err.code).toBe('TOOL_CALL_TIMEOUT');
    expect(err.message).toBe('Timed out after 500 ms waiting for MCP server "up" to reconnect (last error: process exited with code 3)');
    // The attempt carries on for everyone else.
    expect(upstream.status).toBe('reconnecting');
    expect(host.clock.pendingDelays()).toEqual([4_500]);
  });

  it('answers at once, without waiting, when the server is not coming back', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host, { enabled: false });
    const connection = await connected(upstream, host);
    connection.fireClose(closed('process exited with code 1'));
    await expect(upstream.request('tools/call', { name: 'echo' }, TOOL)).rejects.toMatchObject({ code: 'SERVER_NOT_CONNECTED' });
    expect(host.clock.pendingDelays()).toEqual([]);
  });
});

describe('Upstream.request: a lost connection', () => {
  it('reports the failure (the server goes reconnecting) and sends a replay-safe request once more after the reconnect', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const first = await connected(upstream, host);

    const result = upstream.request('resources/read', { uri: 'x://a' }, { timeoutMs: 10_000, replaySafe: true, label: 'resources/read "x://a"' });
    const lostRequest = await first.sent.next();
    expect(lostRequest).toMatchObject({ method: 'resources/read', params: { uri: 'x://a' } });
    lostRequest.answer.reject(closed('the process died'));

    const lost = await reached(host, 'reconnecting');
    expect(lost).toMatchObject({ previous: 'connected', attempt: 1, error: { code: 'SERVER_CLOSED', message: 'the process died' } });
    const second = await reconnect(host, 100);
    const replayed = await second.sent.next();
    expect(replayed).toMatchObject({ method: 'resources/read', params: { uri: 'x://a' } });
    replayed.answer.resolve({ contents: [{ uri: 'x://a', text: 'a' }] });

    await expect(result).resolves.toEqual({ contents: [{ uri: 'x://a', text: 'a' }] });
    expect(first.sent.all).toHaveLength(1);
  });

  it('sends a replay-safe request again only once', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const first = await connected(upstream, host);
    const outcome = settled(upstream.request('resources/read', { uri: 'x://a' }, { timeoutMs: 10_000, replaySafe: true, label: 'resources/read "x://a"' }));
    (await first.sent.next()).answer.reject(closed('died once'));
    await reached(host, 'reconnecting');
    const second = await reconnect(host, 100);
    (await second.sent.next()).answer.reject(closed('died twice'));
    await reached(host, 'reconnecting');
    // A request still retrying would now be waiting for the next reconnect: its deadline runs out.
    host.clock.advance(10_000);

    const { err } = (await outcome) as { err: SwitchboardError };
    expect(err.code).toBe('CALL_OUTCOME_UNKNOWN');
    expect(err.message).toMatch(/died twice/);
    expect(second.sent.all).toHaveLength(1);
  });

  it('ends a request that is not replay-safe with CALL_OUTCOME_UNKNOWN, and does not send it again', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const first = await connected(upstream, host);
    const outcome = settled(upstream.request('tools/call', { name: 'send_mail' }, TOOL));
    (await first.sent.next()).answer.reject(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));

    const { err } = (await outcome) as { err: SwitchboardError };
    expect(err).toBeInstanceOf(SwitchboardError);
    expect(err.code).toBe('CALL_OUTCOME_UNKNOWN');
    expect(err.message).toMatch(/while Tool "send_mail" was running; it may or may not have run.*read ECONNRESET/);
    // Reported all the same: the server is being reconnected.
    expect(upstream.status).toBe('reconnecting');
    expect(host.changes.all.at(-1)).toMatchObject({ status: 'reconnecting', error: { code: 'SERVER_CLOSED', message: 'read ECONNRESET' } });
    const second = await reconnect(host, 100);
    expect(second.sent.all).toEqual([]);
  });

  it.each([
    ['unreachable (ECONNREFUSED)', refused, 100],
    ['session-expired (HTTP 404)', sessionGone, 0],
    // A server restarted at once on its port: the connection closed first, and the 404 came wrapped in that close.
    [
      'session-expired (HTTP 404, in the close it came after)',
      () => new SwitchboardError('SERVER_CLOSED', 'The connection to MCP server "web" is closed', { cause: sessionGone() }),
      0,
    ],
  ])('sends a request that never arrived — %s — again after the reconnect, even when not replay-safe', async (_kind, failure, retryAfterMs) => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const first = await connected(upstream, host);
    const result = upstream.request('tools/call', { name: 'send_mail' }, TOOL);
    (await first.sent.next()).answer.reject(failure());

    expect((await reached(host, 'reconnecting')).nextRetryAt).toBe(host.clock.now() + retryAfterMs);
    const second = await reconnect(host, retryAfterMs);
    const again = await second.sent.next();
    expect(again).toMatchObject({ method: 'tools/call', params: { name: 'send_mail' } });
    again.answer.resolve({ content: [{ type: 'text', text: 'sent' }] });
    await expect(result).resolves.toEqual({ content: [{ type: 'text', text: 'sent' }] });
    expect(first.sent.all).toHaveLength(1);
  });

  it("throws the server's own error as it came, leaving the connection alone", async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const connection = await connected(upstream, host);
    const answer = new Error('MCP error -32602: Unknown prompt');
    const result = upstream.request('prompts/get', { name: 'nope' }, { timeoutMs: 10_000, replaySafe: true, label: 'prompts/get "nope"' });
    (await connection.sent.next()).answer.reject(answer);
    await expect(result).rejects.toBe(answer);
    expect(upstream.status).toBe('connected');
    expect(connection.sent.all).toHaveLength(1);
  });

  it('names the request and the whole deadline when the server did not answer within what was left of it', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const connection = await connected(upstream, host);
    const result = upstream.request('tools/call', { name: 'send_mail' }, { ...TOOL, timeoutMs: 2_000 });
    (await connection.sent.next()).answer.reject(new SwitchboardError('TOOL_CALL_TIMEOUT', 'Request timed out after 2000 ms'));
    await expect(result).rejects.toMatchObject({ code: 'TOOL_CALL_TIMEOUT', message: 'Tool "send_mail" timed out after 2000 ms (MCP server "up")' });
    expect(upstream.status).toBe('connected');
  });
});

describe('Upstream.request: the caller and cancellation', () => {
  const caller: CallerChannel = {
    agent: 'agent-1',
    capabilities: { sampling: {} },
    takesInputRequired: false,
    can: () => true,
    request: () => Promise.resolve({}),
    log: () => undefined,
  };
  const logged = (host: FakeHost) =>
    host.notes.filter((note): note is Extract<HostNote, { kind: 'logMessage' }> => note.kind === 'logMessage').map((note) => [note.params.data, note.callers]);

  it('registers the caller while the request runs (its agent goes with the request) and removes it after, success or not', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const connection = await connected(upstream, host);

    const ok = upstream.request('tools/call', { name: 'ask' }, { ...TOOL, caller });
    const sent = await connection.sent.next();
    expect(sent.opts.agent).toEqual({ capabilities: { sampling: {} }, relayInputRequired: false });
    connection.fireNotification('notifications/message', { level: 'info', data: 'during' });
    sent.answer.resolve({ content: [] });
    await ok;
    connection.fireNotification('notifications/message', { level: 'info', data: 'after' });

    const failing = upstream.request('tools/call', { name: 'ask' }, { ...TOOL, caller });
    (await connection.sent.next()).answer.reject(new Error('MCP error -32603: boom'));
    await expect(failing).rejects.toThrow('boom');
    connection.fireNotification('notifications/message', { level: 'info', data: 'after a failure' });

    expect(logged(host)).toEqual([
      ['during', [caller]],
      ['after', []],
      ['after a failure', []],
    ]);
  });

  it('rejects with the abort reason when aborted while waiting for the connection, and drops its deadline timer', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const first = await connected(upstream, host);
    first.fireClose(closed('gone'));
    const abort = new AbortController();
    const result = upstream.request('tools/call', { name: 'send_mail' }, { ...TOOL, signal: abort.signal, caller });
    const reason = new Error('the agent cancelled');
    abort.abort(reason);
    await expect(result).rejects.toBe(reason);
    expect(host.clock.pendingDelays()).toEqual([100]);
    // The caller left with its request.
    const second = await reconnect(host, 100);
    second.fireNotification('notifications/message', { level: 'info', data: 'after the abort' });
    expect(logged(host)).toEqual([['after the abort', []]]);
  });

  it('rejects with the abort reason when aborted while sent, reporting nothing to the state machine', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const connection = await connected(upstream, host);
    const abort = new AbortController();
    const result = upstream.request('resources/read', { uri: 'x://a' }, { timeoutMs: 10_000, replaySafe: true, label: 'resources/read "x://a"', signal: abort.signal });
    const sent = await connection.sent.next();
    expect(sent.opts.signal).toBe(abort.signal);
    const reason = new Error('the agent cancelled');
    abort.abort(reason);
    // However the connection ends the request, even looking like a lost connection, it stays an abort.
    sent.answer.reject(closed('request cancelled'));
    await expect(result).rejects.toBe(reason);
    expect(upstream.status).toBe('connected');
    expect(connection.sent.all).toHaveLength(1);
  });
});

describe('Upstream.request: what the call gate learns (issue #35)', () => {
  it('tells the gate how long the server took to answer: a result, an error answer, a deadline; not an abandoned request or a lost connection', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const connection = await connected(upstream, host);
    const answered = async (ms: number, end: (sent: Awaited<ReturnType<typeof connection.sent.next>>) => void, options: Partial<UpstreamRequestOptions> = {}) => {
      const result = settled(upstream.request('tools/call', { name: 'send_mail' }, { ...TOOL, ...options }));
      const sent = await connection.sent.next();
      host.clock.advance(ms);
      end(sent);
      return result;
    };
    await answered(300, (sent) => sent.answer.resolve({ content: [] }));
    await answered(300, (sent) => sent.answer.reject(new Error('MCP error -32603: boom')));
    // Two answers are too few to reckon a wait from.
    expect(upstream.traffic).toMatchObject({ serviceMs: null, mode: 'adaptive', limit: 16 });
    await answered(300, (sent) => sent.answer.reject(new SwitchboardError('TOOL_CALL_TIMEOUT', 'Request timed out after 300 ms')));
    expect(upstream.traffic.serviceMs).toBe(300);

    const abort = new AbortController();
    await answered(
      5_000,
      (sent) => {
        abort.abort(new Error('the agent cancelled'));
        sent.answer.reject(closed('request cancelled'));
      },
      { signal: abort.signal },
    );
    expect(upstream.traffic.serviceMs).toBe(300);
    // The connection died under it: the time says nothing about the server's pace.
    await answered(5_000, (sent) => {
      connection.fireClose(closed('gone'));
      sent.answer.reject(closed('gone'));
    });
    expect(upstream.traffic.serviceMs).toBe(300);
    expect(upstream.traffic.inFlight).toBe(0);
  });
});
