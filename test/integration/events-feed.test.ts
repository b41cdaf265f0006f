import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { beforeAll, onTestFinished, describe, expect, it } from 'vitest';
import { EventHub, type HelloEvent, type WireEvent } from '../../src/http/ws/event-hub.js';
import { eventsRoutes } from '../../src/http/ws/events.js';
import { type TestDaemon, startDaemon } from '../helpers/daemon.js';
import { startFixtureHttp } from '../helpers/fixtures.js';
import { closed, collectUntil, nextEvent, openEvents } from '../helpers/events.js';
import { sharedByTests, sharedWithCleanup, startAhead } from '../helpers/shared.js';

const isReloadFinished = (event: WireEvent): boolean => event.type === 'reload.finished';

/**
 * A daemon whose reloads wait until the server is live: with the default 250 ms gate and a warm
 * cache, a reload would answer with deferred tools and the live switch would land after
 * `reload.finished`, racing the assertions on `seq`.
 */
/** A full restart (`force`): a plain reload leaves an unchanged server alone and emits little. */
async function reloadAll(daemon: TestDaemon): Promise<void> {
  const { status } = await daemon.json('/reload?force=true', { method: 'POST' });
  expect(status).toBe(200);
}

/** A WebSocket handshake that is answered with a plain HTTP response. */
function upgradeRequest(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    // No agent: the daemon drops the socket after refusing an upgrade, so it cannot be reused.
    const req = request(url, {
      agent: false,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      },
    });
    req.once('upgrade', () => reject(new Error('upgraded')));
    req.once('response', (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.once('error', reject);
    req.end();
  });
}

function expectConsecutive(events: readonly WireEvent[], after: number): void {
  expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => after + 1 + i));
}

/**
 * The echo server every daemon here connects to, over HTTP: one process for the file, and a
 * reload reconnects in milliseconds where a stdio server's restart waited on node's start. What
 * is tested is the feed's numbering and replay, for any kind of server.
 */
const echoHttp = sharedWithCleanup((cleanup) => startFixtureHttp('echo-http', { cleanup }));
const startEcho = async (): Promise<TestDaemon> =>
  startDaemon({ servers: { echo: { type: 'http', url: (await echoHttp()).url } }, config: { startupGateMs: 60_000 }, lifetime: 'manual' });
/** The echo daemon of the tests that only read it (the hello, a bad since or recent, a plain GET, a since ahead). */
const echoDaemon = sharedByTests(startEcho, (d) => d.close());
/** A daemon of its own for a test that reloads or closes it. */
const ownDaemon = () => sharedByTests(startEcho, (d) => d.close());
const forFullReload = ownDaemon();
const forReplay = ownDaemon();
const forShutdown = ownDaemon();
const forSmallRing = ownDaemon();
// All started at once, before the first test: one after another, each test waited for its
// daemon's echo server to start while its worker sat idle.
beforeAll(() => startAhead(echoDaemon, forFullReload, forReplay, forShutdown, forSmallRing));

describe('GET /events', () => {
  it('greets with a hello snapshot of the running daemon', async () => {
    const daemon = await echoDaemon();
    const ws = await openEvents(daemon.url);
    const hello = await nextEvent(ws, 'hello');

    expect(hello).toMatchObject({
      type: 'hello',
      seq: daemon.daemon.events.seq,
      state: 'ready',
      catalogueVersion: daemon.daemon.manager.getCatalogue().version,
      toolCount: 3,
    });
    expect(hello.seq).toBeGreaterThan(0);
    expect(Date.parse(hello.ts)).not.toBeNaN();
    expect(hello.servers).toEqual([expect.objectContaining({ name: 'echo', status: 'connected', toolCount: 3 })]);
    expect(hello).not.toHaveProperty('recent');
  });

  it('opens with history when asked (?recent=): the hello carries the latest events, oldest first', async () => {
    const daemon = await echoDaemon();
    const ws = await openEvents(daemon.url, { query: 'recent=2' });
    const hello = (await nextEvent(ws, 'hello')) as WireEvent & { recent?: WireEvent[] };
    const seq = daemon.daemon.events.seq;
    expect(hello.recent?.map((event) => event.seq)).toEqual([seq - 1, seq]);
    expect(hello.recent?.at(-1)).toEqual(daemon.daemon.events.since(seq - 1)?.[0]);
  });

  it('numbers every event of a full reload without a gap', async () => {
    const daemon = await forFullReload();
    const ws = await openEvents(daemon.url);
    const hello = await nextEvent(ws, 'hello');
    await reloadAll(daemon);
    const events = await collectUntil(ws, isReloadFinished);

    expectConsecutive(events, hello.seq);
    expect(events[0]).toMatchObject({ type: 'reload.started', server: null });
    expect(events.at(-1)).toMatchObject({ type: 'reload.finished', server: null, ok: true });
    const types = events.map((event) => event.type);
    expect(types).toContain('server.status');
    expect(events).toContainEqual(expect.objectContaining({ type: 'tools.changed', server: 'echo', cause: 'reload', toolCount: 3 }));
    for (const event of events) expect(Date.parse(event.ts)).not.toBeNaN();
  });

  it('replays exactly the missed events for ?since=, then continues live', async () => {
    const daemon = await forReplay();
    const witness = await openEvents(daemon.url);
    const { seq: before } = await nextEvent(witness, 'hello');
    await reloadAll(daemon);
    const missed = await collectUntil(witness, isReloadFinished);

    const late = await openEvents(daemon.url, { query: `since=${before}` });
    const replayed = await collectUntil(late, isReloadFinished);
    expect(replayed).toEqual(missed);

    await reloadAll(daemon);
    const live = await collectUntil(late, isReloadFinished);
    expectConsecutive([...replayed, ...live], before);
    expect(live).toEqual(await collectUntil(witness, isReloadFinished));
  });

  it('answers a ?since= ahead of the stream (a previous daemon) with a fresh hello', async () => {
    const daemon = await echoDaemon();
    const ws = await openEvents(daemon.url, { query: `since=${daemon.daemon.events.seq + 1000}` });
    const hello = await nextEvent(ws, 'hello');
    expect(hello.seq).toBe(daemon.daemon.events.seq);
  });

  it('refuses an invalid since with 400 before the upgrade', async () => {
    const daemon = await echoDaemon();
    for (const since of ['abc', '-1', '1.5', '', '1&since=2']) {
      const { status, body } = await upgradeRequest(`${daemon.url}/events?since=${since}`);
      expect(status).toBe(400);
      expect(JSON.parse(body)).toMatchObject({ error: { code: 'VALIDATION_FAILED' } });
    }
    await expect(openEvents(daemon.url, { query: 'since=x' })).rejects.toThrow(/HTTP 400/);
    for (const recent of ['abc', '-1', '1001', '1&recent=2']) {
      const { status, body } = await upgradeRequest(`${daemon.url}/events?recent=${recent}`);
      expect(status).toBe(400);
      expect(JSON.parse(body)).toMatchObject({ error: { code: 'VALIDATION_FAILED', message: expect.stringContaining('recent must be') } });
    }
  });

  it('answers a plain GET without an upgrade with 426 UPGRADE_REQUIRED in the error shape', async () => {
    const daemon = await echoDaemon();
    const { status, body } = await daemon.json('/events');
    expect(status).toBe(426);
    expect(body).toMatchObject({ error: { code: 'UPGRADE_REQUIRED' } });
  });

  it('closes every subscriber with 1001 on shutdown', async () => {
    const daemon = await forShutdown();
    const sockets = await Promise.all([openEvents(daemon.url), openEvents(daemon.url)]);
    await Promise.all(sockets.map((ws) => nextEvent(ws, 'hello')));
    await daemon.close();
    for (const ws of sockets) expect(await closed(ws)).toEqual({ code: 1001, reason: 'going away' });
  });
});

describe('GET /events with a small ring', () => {
  /** The real daemon's bus behind a second feed whose hub keeps only `ringSize` events. */
  async function smallRingFeed(daemon: TestDaemon, ringSize: number): Promise<{ url: string; hub: EventHub }> {
    const hub = new EventHub({ bus: daemon.daemon.bus, manager: daemon.daemon.manager, runtime: daemon.daemon.runtime, ringSize });
    const app = Fastify();
    await app.register(eventsRoutes, { events: hub });
    await app.listen({ host: '127.0.0.1', port: 0 });
    onTestFinished(async () => {
      hub.close();
      await app.close();
      hub.stop();
    });
    return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, hub };
  }

  it('sends a fresh hello when the events after since are no longer kept', async () => {
    const daemon = await forSmallRing();
    const feed = await smallRingFeed(daemon, 3);
    const witness = await openEvents(feed.url);
    const first = await nextEvent(witness, 'hello');
    await reloadAll(daemon);
    const missed = await collectUntil(witness, isReloadFinished);
    expect(missed.length).toBeGreaterThan(3);

    const tooOld = await openEvents(feed.url, { query: `since=${first.seq}` });
    const [hello] = await collectUntil(tooOld, () => true);
    expect(hello).toMatchObject({ type: 'hello', seq: feed.hub.seq });
    expect((hello as HelloEvent).servers).toEqual([expect.objectContaining({ name: 'echo' })]);

    // Still inside the ring: a replay, not a hello.
    const recent = await openEvents(feed.url, { query: `since=${feed.hub.seq - 2}` });
    expect(await collectUntil(recent, isReloadFinished)).toEqual(missed.slice(-2));
  });
});
