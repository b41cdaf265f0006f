import { describe, expect, it } from 'vitest';
import type { ServerConfig } from '../../src/config/types.js';
import type { DaemonEvent } from '../../src/events/daemon-events.js';
import { discoveryOf, recordDaemonEvents, startDaemon } from '../helpers/daemon.js';
import { startFixtureHttp } from '../helpers/fixtures.js';
import { sharedByTests } from '../helpers/shared.js';

/** Operator operations over HTTP: reload, reload one server, disconnect one server. */

interface ErrorBody {
  error: { code: string; message: string };
}
interface ServerView {
  name: string;
  status: string;
  toolCount: number;
  connectedSince: string | null;
  tools?: string[];
}
interface ToolList {
  tools: Array<{ name: string; server: string }>;
}

/**
 * These tests are about operations, not about stdio: every server is a session on one echo-http
 * fixture, shared by the file, so a reload opens a session instead of spawning a process.
 */
const echoHttp = sharedByTests(
  () => startFixtureHttp('echo-http'),
  (http) => http.close(),
);
const echo = async (): Promise<ServerConfig> => ({ type: 'http', url: (await echoHttp()).url });

/**
 * Reloads go through the startup gate, and after the first start the tools are cached: with the
 * default 250 ms gate a slow spawn would answer with deferred tools and connect in the
 * background. These tests are about ordering and isolation, so the gate waits for every server.
 */
const WAIT_FOR_ALL = { startupGateMs: 60_000 };

function aboutServer(events: DaemonEvent[], server: string): DaemonEvent[] {
  return events.filter((e) => (e.type === 'server.status' || e.type === 'tools.changed') && e.server === server);
}

describe('POST /servers/:name/reload', () => {
  it('reconnects that server and leaves the others untouched', async () => {
    const sb = await startDaemon({ config: WAIT_FOR_ALL, servers: { a: await echo(), b: await echo() } });
    const aBefore = (await sb.json<ServerView>('/servers/a')).body;
    const bBefore = (await sb.json<ServerView>('/servers/b')).body;
    const bToolsBefore = (await sb.json<ToolList>('/tools?server=b')).body;
    const bToolObjects = bBefore.tools!.map((name) => sb.daemon.manager.getCatalogue().get(name));
    const events = recordDaemonEvents(sb.daemon);

    const res = await sb.json<ServerView>('/servers/a/reload', { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'a', status: 'connected', toolCount: 3 });
    expect(res.body.tools).toEqual(aBefore.tools);
    expect(res.body.connectedSince).not.toBe(aBefore.connectedSince);

    // a went down and came back; b saw nothing at all.
    expect(aboutServer(events, 'a').map((e) => e.type)).toContain('server.status');
    expect(aboutServer(events, 'b')).toEqual([]);
    expect(events[0]).toEqual({ type: 'reload.started', server: 'a' });
    expect(events.at(-1)).toEqual({ type: 'reload.finished', server: 'a', ok: true });
    const bAfter = (await sb.json<ServerView>('/servers/b')).body;
    expect(bAfter).toEqual(bBefore);
    expect((await sb.json<ToolList>('/tools?server=b')).body.tools).toEqual(bToolsBefore.tools);
    expect(bBefore.tools!.map((name) => sb.daemon.manager.getCatalogue().get(name))).toEqual(bToolObjects);
  });

  it('answers 404 SERVER_NOT_FOUND for a server that is nowhere in the config, with no reload events', async () => {
    const sb = await startDaemon({ config: WAIT_FOR_ALL, servers: { a: await echo() } });
    const events = recordDaemonEvents(sb.daemon);
    const res = await sb.json<ErrorBody>('/servers/ghost/reload', { method: 'POST' });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('SERVER_NOT_FOUND');
    // A reload that did happen afterwards is the first event: the 404 left nothing on the feed.
    await sb.json('/servers/a/reload', { method: 'POST' });
    expect(events[0]).toEqual({ type: 'reload.started', server: 'a' });
    expect(events.filter((e) => 'server' in e && e.server === 'ghost')).toEqual([]);
  });

  it('connects a server added to the config since the start', async () => {
    const servers: Record<string, ServerConfig> = { a: await echo() };
    const sb = await startDaemon({ config: WAIT_FOR_ALL, discover: async () => discoveryOf(servers) });
    servers.late = await echo();
    const res = await sb.json<ServerView>('/servers/late/reload', { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'late', status: 'connected', toolCount: 3 });
    expect((await sb.json<ToolList>('/tools?server=late')).body.tools).toHaveLength(3);
  });
});

describe('POST /servers/:name/disconnect', () => {
  it("removes exactly that server's tools", async () => {
    const sb = await startDaemon({ config: WAIT_FOR_ALL, servers: { a: await echo(), b: await echo() } });
    const bTools = (await sb.json<ToolList>('/tools?server=b')).body;

    const res = await sb.json<ServerView>('/servers/a/disconnect', { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'a', status: 'disconnected', toolCount: 0, tools: [], connectedSince: null });

    const all = (await sb.json<ToolList>('/tools')).body;
    expect(all.tools.map((t) => t.server)).toEqual(['b', 'b', 'b']);
    expect(all.tools).toEqual(bTools.tools);
    expect((await sb.json<ServerView>('/servers/b')).body.status).toBe('connected');
    const call = await sb.json<ErrorBody>('/tools/mcp_a_echo/call', { method: 'POST', body: { arguments: { text: 'x' } } });
    expect(call.status).toBe(404);
    expect(call.body.error.code).toBe('TOOL_NOT_FOUND');

    // And it can be brought back.
    const back = await sb.json<ServerView>('/servers/a/reload', { method: 'POST' });
    expect(back.body).toMatchObject({ status: 'connected', toolCount: 3 });
  });

  it('answers 404 SERVER_NOT_FOUND for an unknown server', async () => {
    const sb = await startDaemon({ config: WAIT_FOR_ALL, servers: { a: await echo() } });
    const res = await sb.json<ErrorBody>('/servers/ghost/disconnect', { method: 'POST' });
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({ code: 'SERVER_NOT_FOUND', message: 'No server named "ghost"' });
  });
});

describe('POST /reload', () => {
  it('rediscovers and reconnects everything, reporting each server and the failures', async () => {
    const servers: Record<string, ServerConfig> = { a: await echo(), b: await echo() };
    const sb = await startDaemon({ config: WAIT_FOR_ALL, discover: async () => discoveryOf(servers) });
    delete servers.b;
    servers.c = await echo();
    servers.bad = { type: 'stdio' };

    const res = await sb.json<{ servers: ServerView[]; errors: Array<{ path: string; error: { code: string; message: string } }> }>('/reload', {
      method: 'POST',
    });
    expect(res.status).toBe(200);
    expect(res.body.servers.map((s) => [s.name, s.status])).toEqual([
      ['a', 'connected'],
      ['bad', 'failed'],
      ['c', 'connected'],
    ]);
    expect(res.body.errors).toEqual([{ path: 'bad', error: { code: 'CONFIG_INVALID', message: expect.any(String) } }]);
    const servedBy = new Set((await sb.json<ToolList>('/tools')).body.tools.map((t) => t.server));
    expect([...servedBy].sort()).toEqual(['a', 'c']);
  });

  it('serialises concurrent operations: each finishes before the next starts', async () => {
    const sb = await startDaemon({ config: WAIT_FOR_ALL, servers: { a: await echo(), b: await echo() } });
    const events = recordDaemonEvents(sb.daemon);

    const results = await Promise.all([
      sb.json('/reload', { method: 'POST' }),
      sb.json('/reload', { method: 'POST' }),
      sb.json('/servers/a/reload', { method: 'POST' }),
      sb.json('/servers/b/disconnect', { method: 'POST' }),
    ]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);

    const operations = events.filter((e) => e.type === 'reload.started' || e.type === 'reload.finished');
    expect(operations.map((e) => e.type)).toEqual(['reload.started', 'reload.finished', 'reload.started', 'reload.finished', 'reload.started', 'reload.finished']);
    // Every status and tools change of a reload happened inside that reload's window; the
    // disconnect, queued last, is not a reload and comes after them all.
    const lastReload = events.findLastIndex((e) => e.type === 'reload.finished');
    let open = false;
    for (const event of events.slice(0, lastReload)) {
      if (event.type === 'reload.started') open = true;
      else if (event.type === 'reload.finished') open = false;
      else expect(open, JSON.stringify(event)).toBe(true);
    }
    expect(events.slice(lastReload + 1)).toEqual([
      expect.objectContaining({ type: 'tools.changed', server: 'b', cause: 'disconnect', toolCount: 0 }),
      expect.objectContaining({ type: 'server.status', server: 'b', status: 'disconnected' }),
    ]);
  });

  it('keeps the running servers when discovery fails, and says so: DISCOVERY_FAILED in the answer and in reload.finished', async () => {
    let fail = false;
    const sb = await startDaemon({
      config: WAIT_FOR_ALL,
      discover: async () => {
        if (fail) throw new Error('the config directory is gone');
        return discoveryOf({ a: await echo() });
      },
    });
    fail = true;
    const events = recordDaemonEvents(sb.daemon);

    const res = await sb.json<{ servers: ServerView[]; errors: unknown[] }>('/reload', { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.body.servers.map((s) => [s.name, s.status])).toEqual([['a', 'connected']]);
    const error = { code: 'DISCOVERY_FAILED', message: 'the config directory is gone' };
    expect(res.body.errors).toEqual([{ path: '.mcp.json', error }]);
    expect(events).toEqual([
      { type: 'reload.started', server: null },
      { type: 'reload.finished', server: null, ok: false, error },
    ]);

    // One server's reload needs discovery to find it: it fails as a whole, and leaves no trace.
    const one = await sb.json<ErrorBody>('/servers/a/reload', { method: 'POST' });
    expect(one.status).toBe(500);
    expect(one.body.error).toEqual({ code: 'DISCOVERY_FAILED', message: 'Discovery failed: the config directory is gone' });
    expect(events).toHaveLength(2);
    expect((await sb.json<ServerView>('/servers/a')).body.status).toBe('connected');
  });
});
