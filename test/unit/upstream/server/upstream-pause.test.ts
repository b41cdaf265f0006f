import { SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { SwitchboardError } from '../../../../src/errors.js';
import type { CallerChannel } from '../../../../src/upstream/transport/caller.js';
import { EraCompanion } from '../../../../src/upstream/server/era-companion.js';
import { connected, FakeConnection, fakeHost, identity, newUpstream, reached, transitions } from '../../../helpers/fake-upstream.js';

/**
 * Issue #35 item 3: a pause an upstream asked for (429/503 with `Retry-After`) holds every request
 * of the state machine, on the manual clock — a ping due in it waits for its end, a reconnect
 * too, re-lists after `list_changed` and the era companion's opening as well; and a ping or a
 * connect refused for a pause is no failure: the server stays `connected` (or keeps connecting),
 * with no restart and no crash counted.
 */

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** What the SDK throws for a 429 (the transport has recorded the pause by then). */
const tooMany = (): SdkHttpError =>
  new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, 'Error POSTing to endpoint: slow down', { status: 429, statusText: 'Too Many Requests' });

describe('a pause the server asked for, in the state machine', () => {
  it('holds a ping due in it until it ends; the server stays connected', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host, { pingIntervalMs: 1_000 });
    const connection = await connected(upstream, host);
    const start = host.clock.now();
    const pings: number[] = [];
    connection.pingAnswer = async () => void pings.push(host.clock.now() - start);

    upstream.throttle.pause(2_500);
    host.clock.advance(1_000);
    await flush();
    expect(pings).toEqual([]);
    // Due at 1 000, sent when the pause ends at 2 500; then the usual interval again.
    expect(host.clock.pendingDelays()).toEqual([1_500]);
    host.clock.advance(1_500);
    await flush();
    expect(pings).toEqual([2_500]);
    host.clock.advance(1_000);
    await flush();
    expect(pings).toEqual([2_500, 3_500]);
    expect(upstream).toMatchObject({ status: 'connected', restarts: 0 });
  });

  it('counts a ping refused for a pause, or held by one past its deadline, as no failure: it is sent again when the pause ends', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host, { pingIntervalMs: 1_000 });
    const connection = await connected(upstream, host);
    const answers = [
      () => (upstream.throttle.pause(2_000), Promise.reject(tooMany())),
      // The transport held it for a pause that began meanwhile, and its deadline passed.
      () => (upstream.throttle.pause(20_000), Promise.reject(new SwitchboardError('UPSTREAM_PING_TIMEOUT', 'no answer to ping within 100 ms'))),
    ];
    let pings = 0;
    connection.pingAnswer = () => (answers[pings++] ?? (() => Promise.resolve()))();

    host.clock.advance(1_000);
    await flush();
    expect(pings).toBe(1);
    expect(host.clock.pendingDelays()).toEqual([2_000]);
    host.clock.advance(2_000);
    await flush();
    expect(pings).toBe(2);
    expect(host.clock.pendingDelays()).toEqual([20_000]);
    host.clock.advance(20_000);
    await flush();
    expect(pings).toBe(3);
    expect(upstream).toMatchObject({ status: 'connected', restarts: 0, connection });
    expect(transitions(host)).toEqual(['disconnected→connecting', 'connecting→connected']);
  });

  it('holds a reconnect due in it until it ends', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const connection = await connected(upstream, host);
    upstream.throttle.pause(1_000);
    connection.fireClose(new SwitchboardError('SERVER_CLOSED', 'the event stream broke'));
    await reached(host, 'reconnecting');

    // The backoff's 100 ms pass inside the pause: nothing is sent until its end.
    host.clock.advance(100);
    await flush();
    expect(host.connects.untaken).toBe(0);
    host.clock.advance(900);
    (await host.connects.next()).resolve(new FakeConnection());
    await reached(host, 'connected');
    expect(upstream.restarts).toBe(1);
  });

  it('tries a connect refused for a pause again once it ends, instead of failing the server', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const task = upstream.start('startup', { returned: false });
    upstream.throttle.pause(2_000);
    (await host.connects.next()).reject(tooMany());
    await flush();
    expect(upstream.status).toBe('connecting');
    expect(host.connects.untaken).toBe(0);
    host.clock.advance(2_000);
    (await host.connects.next()).resolve(new FakeConnection());
    await task.done;
    expect(task.outcome).toEqual({ ok: true });
    expect(upstream).toMatchObject({ status: 'connected', restarts: 0 });
  });

  it('holds the re-lists after list_changed (tools, prompts) until it ends', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const connection = await connected(upstream, host);
    const start = host.clock.now();
    const lists: string[] = [];
    const list = host.list.bind(host);
    host.list = (...args) => (lists.push(`tools@${host.clock.now() - start}`), list(...args));
    host.listOthers = async (_upstream, _connection, _signal, kinds) => (lists.push(`${kinds?.join('+')}@${host.clock.now() - start}`), {});

    upstream.throttle.pause(2_000);
    upstream.requestRelist(connection);
    connection.fireNotification('notifications/prompts/list_changed', {});
    await flush();
    expect(lists).toEqual([]);
    host.clock.advance(2_000);
    await upstream.relistSettled();
    await flush();
    expect(lists.sort()).toEqual(['prompts@2000', 'tools@2000']);
  });

  it('holds the era companion’s opening until it ends', async () => {
    const host = fakeHost();
    const upstream = newUpstream(host);
    const companion = new EraCompanion(identity(), host, { pause: upstream.throttle, logged: () => undefined });
    const primary = Object.defineProperty(new FakeConnection('http'), 'era', { value: 'modern' });
    const caller = { agent: 'a', capabilities: {}, takesInputRequired: false, can: () => true } as unknown as CallerChannel;

    upstream.throttle.pause(2_000);
    const routed = companion.route(primary, 'tools/call', 'echo', caller, undefined);
    await flush();
    expect(host.connects.untaken).toBe(0);
    host.clock.advance(2_000);
    // The companion's listing is the fake's to refuse: it then serves nobody, which is all right here.
    (await host.connects.next()).resolve(new FakeConnection('http'));
    await expect(routed).resolves.toBeUndefined();
  });
});
