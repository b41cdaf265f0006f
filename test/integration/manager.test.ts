import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/server';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { ServerConfig } from '../../src/config/types.js';
import { MCPManager } from '../../src/upstream/manager.js';
import { configHash } from '../../src/config/config-hash.js';
import { EventBus } from '../../src/events/event-bus.js';
import { openToolCache } from '../../src/store/open-tool-cache.js';
import { nextDaemonEvent, recordDaemonEvents } from '../helpers/daemon.js';
import { fixtureServerConfig, fixturePath, startFixtureHttp } from '../helpers/fixtures.js';
import { holdInitialize } from '../helpers/hold-initialize.js';
import { withLatency } from '../helpers/late-store.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { isProcessGone, tempDir } from '../helpers/process.js';
import { callTool } from '../helpers/route-call.js';
import { sharedByTests, startAhead } from '../helpers/shared.js';

const ECHO_TOOLS: Tool[] = ['add', 'echo', 'reverse'].map((name) => ({
  name,
  description: `cached ${name}`,
  inputSchema: { type: 'object' },
}));

/** A manager publishing to its own bus, as the composition root wires it. */
function newManager(options: ConstructorParameters<typeof MCPManager>[0] = {}): { manager: MCPManager; bus: EventBus } {
  const bus = new EventBus();
  const manager = new MCPManager({ ...options, publish: bus.publish });
  onTestFinished(() => manager.disconnectAll());
  return { manager, bus };
}

/**
 * For the tests about names, collisions and caches, not processes, and for a server that only
 * needs to be there: an echo server that is a session on one echo-http fixture for the file, so
 * connecting one spawns nothing (issue #34).
 */
const echoHttp = sharedByTests(
  () => startFixtureHttp('echo-http'),
  (http) => http.close(),
);
const echoSession = async (): Promise<ServerConfig> => ({ type: 'http', url: (await echoHttp()).url });
startAhead(echoHttp);

async function cacheStore() {
  const dir = await tempDir();
  const { store } = openToolCache(join(dir, 'cache.db'));
  onTestFinished(() => store.close());
  return store;
}

describe('MCPManager startup gate', () => {
  it('serves the fast server live, the slow cached one deferred, awaits the uncached one, reports the failure', async () => {
    const store = await cacheStore();
    // The two slow servers connect when the test releases them; the gate runs on the manual clock.
    const [cachedHold, uncachedHold] = [await holdInitialize(), await holdInitialize()];
    const configs: Record<string, ServerConfig> = {
      fast: await echoSession(),
      cached: fixtureServerConfig('slow-initialize', { env: { INIT_DELAY_MS: '0', ...cachedHold.env } }),
      uncached: fixtureServerConfig('slow-initialize', { env: { INIT_DELAY_MS: '0', ...uncachedHold.env } }),
      broken: fixtureServerConfig('exits-at-start'),
    };
    await store.put('cached', configHash(configs.cached as ServerConfig), ECHO_TOOLS);
    const clock = new ManualClock();
    const { manager, bus } = newManager({ store, startupGateMs: 2500, clock });
    const events = recordDaemonEvents({ bus });

    const connecting = manager.connectServers(configs);
    await expect.poll(() => manager.getConnectionStatus('fast'), { timeout: 10_000 }).toBe('connected');
    await expect.poll(() => manager.getConnectionStatus('broken'), { timeout: 10_000 }).toBe('failed');
    await expect.poll(() => clock.pendingDelays()).toContain(2500);
    clock.advance(2500);
    // Past the gate: the cached one is served from the cache at once, the uncached one is awaited.
    await expect.poll(() => manager.getCatalogue().get('mcp_cached_echo')?.deferred).toBe(true);
    await uncachedHold.release();
    const { errors } = await connecting;

    expect(errors.map((e) => e.server)).toEqual(['broken']);
    expect(errors[0]?.error.message).toMatch(/exit/i);
    expect(manager.getConnectionStatus('fast')).toBe('connected');
    expect(manager.getConnectionStatus('uncached')).toBe('connected');
    expect(manager.getConnectionStatus('cached')).toBe('connecting');
    expect(manager.getConnectionStatus('broken')).toBe('failed');

    const byServer = (server: string) => manager.getTools().filter((tool) => tool.server === server);
    expect(byServer('fast').map((t) => [t.originalName, t.deferred])).toEqual([
      ['add', false],
      ['echo', false],
      ['reverse', false],
    ]);
    expect(byServer('uncached').every((t) => !t.deferred)).toBe(true);
    expect(byServer('cached').map((t) => [t.description, t.deferred])).toEqual([
      ['cached add', true],
      ['cached echo', true],
      ['cached reverse', true],
    ]);
    expect(byServer('broken')).toEqual([]);
    // The deferred tools were announced as such during startup.
    expect(events).toContainEqual(expect.objectContaining({ type: 'tools.changed', server: 'cached', deferred: true, cause: 'startup' }));

    // Background completion replaces the cached tools with live ones and says so.
    const live = nextDaemonEvent({ bus }, 'tools.changed', (e) => e.server === 'cached');
    await cachedHold.release();
    expect(await live).toMatchObject({ cause: 'background', deferred: false, toolCount: 3 });
    expect(byServer('cached').map((t) => [t.description, t.deferred])).toEqual([
      ['Adds two numbers', false],
      ['Returns its text unchanged', false],
      ['Reverses its text', false],
    ]);
    // Nobody else's tools were touched by the late load.
    expect(byServer('fast')).toHaveLength(3);
    expect(byServer('uncached')).toHaveLength(3);
  });

  it('a deferred tool call waits for the connection and then succeeds', async () => {
    const store = await cacheStore();
    const hold = await holdInitialize();
    const config = fixtureServerConfig('slow-initialize', { env: { INIT_DELAY_MS: '0', ...hold.env } });
    await store.put('slow', configHash(config), ECHO_TOOLS);
    const { manager } = newManager({ store, startupGateMs: 0 });

    await manager.connectServers({ slow: config });
    expect(manager.getCatalogue().get('mcp_slow_echo')?.deferred).toBe(true);

    const call = callTool(manager, 'mcp_slow_echo', { text: 'after the wait' });
    await hold.release();
    expect(await call).toEqual({ content: [{ type: 'text', text: 'after the wait' }] });
    expect(manager.getConnectionStatus('slow')).toBe('connected');
  });

  it('waits for a cache that answers late (a networked one) and serves its tools deferred all the same', async () => {
    const store = await cacheStore();
    // Held for the whole test: the server cannot connect before the late cache answers.
    const hold = await holdInitialize();
    const config = fixtureServerConfig('slow-initialize', { env: { INIT_DELAY_MS: '0', ...hold.env } });
    await store.put('slow', configHash(config), ECHO_TOOLS);
    // The gate opens at once, long before the cache answers; it must not take "not answered yet" for "not cached".
    const { manager } = newManager({ store: withLatency(store, 300), startupGateMs: 0 });

    await manager.connectServers({ slow: config });
    expect(manager.getConnectionStatus('slow')).toBe('connecting');
    expect(manager.getCatalogue().get('mcp_slow_echo')).toMatchObject({ description: 'cached echo', deferred: true });
  });

  it('does not serve cached tools after the config changed: the server is awaited instead', async () => {
    const store = await cacheStore();
    // Only a header differs, so the config hash does: the cached list belongs to the old config.
    const session = await echoSession();
    const oldConfig: ServerConfig = { ...session, headers: { 'X-Config-Generation': '1' } };
    const newConfig: ServerConfig = { ...session, headers: { 'X-Config-Generation': '2' } };
    await store.put('slow', configHash(oldConfig), ECHO_TOOLS);
    const { manager, bus } = newManager({ store, startupGateMs: 0 });
    const events = recordDaemonEvents({ bus });

    await manager.connectServers({ slow: newConfig });

    expect(manager.getConnectionStatus('slow')).toBe('connected');
    expect(events.filter((e) => e.type === 'tools.changed' && e.deferred)).toEqual([]);
    expect(manager.getCatalogue().get('mcp_slow_echo')?.description).toBe('Returns its text unchanged');
    // The fresh list was written back under the new hash.
    expect((await store.get('slow', configHash(newConfig)))?.tools.map((t) => t.name).sort()).toEqual(['add', 'echo', 'reverse']);
  });
});

describe('MCPManager teardown', () => {
  it('disconnectAll leaves no child or grandchild process', async () => {
    // `; true` stops the shell from exec-ing node, so node is the daemon's grandchild.
    const command = `${process.execPath} ${fixturePath('echo-stdio')}; true`;
    const { manager } = newManager();
    await manager.connectServers({
      wrapped: { command: '/bin/sh', args: ['-c', command] },
      direct: fixtureServerConfig('echo-stdio'),
    });
    const shellPid = (await manager.waitForConnection('wrapped')).pid as number;
    const directPid = (await manager.waitForConnection('direct')).pid as number;
    const grandchildren = readFileSync(`/proc/${shellPid}/task/${shellPid}/children`, 'utf8').trim().split(/\s+/).map(Number);
    expect(grandchildren).toHaveLength(1);

    await manager.disconnectAll();

    for (const pid of [shellPid, directPid, ...grandchildren]) expect(isProcessGone(pid)).toBe(true);
    expect(manager.getTools()).toEqual([]);
    expect(manager.listServers()).toEqual([]);
  });

  it('disconnectServer removes only that server’s tools, even when names collide after sanitising', async () => {
    const { manager, bus } = newManager();
    await manager.connectServers({ 'a.b': await echoSession(), a_b: await echoSession() });
    expect(manager.getTools()).toHaveLength(6);
    expect(manager.getCatalogue().collisions().length).toBeGreaterThan(0);

    const changed = nextDaemonEvent({ bus }, 'tools.changed');
    await manager.disconnectServer('a.b');

    expect(await changed).toMatchObject({ server: 'a.b', cause: 'disconnect', toolCount: 0 });
    expect(manager.getTools().map((t) => [t.server, t.name])).toEqual([
      ['a_b', 'mcp_a_b_add'],
      ['a_b', 'mcp_a_b_echo'],
      ['a_b', 'mcp_a_b_reverse'],
    ]);
    expect(manager.getConnectionStatus('a.b')).toBe('disconnected');
    expect(manager.getConnectionStatus('a_b')).toBe('connected');
  });

  it('with health off, marks a server disconnected the moment its transport closes on its own, keeping others', async () => {
    const { manager, bus } = newManager({ health: { enabled: false } });
    // Listened for before the connect: the crash may come before connectServers resolves (it waits for both).
    const closed = nextDaemonEvent({ bus }, 'server.status', (e) => e.server === 'crashy' && e.previous === 'connected');
    await manager.connectServers({
      crashy: fixtureServerConfig('exits-after-initialize', { env: { EXIT_AFTER: 'tools/list', EXIT_AFTER_MS: '150' } }),
      steady: await echoSession(),
    });
    const status = await closed;
    expect(status).toMatchObject({ status: 'disconnected', previous: 'connected' });
    expect(manager.getServer('crashy')?.lastError).toEqual({ code: 'SERVER_CLOSED', message: expect.stringMatching(/crashed/) });
    expect(manager.getServer('crashy')?.stale).toBe(true);
    expect(manager.getConnectionStatus('steady')).toBe('connected');
    expect(await callTool(manager, 'mcp_steady_echo', { text: 'still here' })).toEqual({
      content: [{ type: 'text', text: 'still here' }],
    });
    // A call to the dead server's stale tool answers at once with an MCP error.
    const dead = await callTool(manager, 'mcp_crashy_echo', { text: 'x' });
    expect(dead.isError).toBe(true);
    expect(dead.content).toEqual([{ type: 'text', text: expect.stringMatching(/^MCP error: .*disconnected/) }]);
    expect(dead._meta).toEqual({ 'switchboard/error': { code: 'SERVER_NOT_CONNECTED' } });
  });

  it('re-lists tools on notifications/tools/list_changed and emits the change', async () => {
    const { manager, bus } = newManager();
    await manager.connectServers({ dyn: fixtureServerConfig('list-changed') });
    const changed = nextDaemonEvent({ bus }, 'tools.changed', (e) => e.cause === 'list_changed');
    await callTool(manager, 'mcp_dyn_add_tool', { name: 'fresh' });
    expect(await changed).toMatchObject({ server: 'dyn', added: ['mcp_dyn_fresh'], removed: [] });
    expect(manager.getCatalogue().get('mcp_dyn_fresh')?.server).toBe('dyn');
  });
});

describe('MCPManager edge cases found in review', () => {
  it('does not lose a list_changed that arrives together with the first tools/list answer', async () => {
    const { manager, bus } = newManager();
    const relisted = nextDaemonEvent({ bus }, 'tools.changed', (e) => e.cause === 'list_changed');
    await manager.connectServers({ raw: fixtureServerConfig('changes-during-first-list') });
    expect(await relisted).toMatchObject({ server: 'raw', added: ['mcp_raw_late'] });
    expect(manager.getCatalogue().get('mcp_raw_late')?.server).toBe('raw');
  });

  it('announces a tool of another server that a new name collision renamed', async () => {
    const { manager, bus } = newManager();
    await manager.connectServers({ a_b: await echoSession() });
    expect(manager.getCatalogue().get('mcp_a_b_echo')?.server).toBe('a_b');
    const events = recordDaemonEvents({ bus });

    // "a.b" sorts before "a_b" among the colliders, so it takes the plain names.
    await manager.connectServers({ 'a.b': await echoSession() });

    expect(manager.getCatalogue().get('mcp_a_b_echo')?.server).toBe('a.b');
    const renamed = events.find((e) => e.type === 'tools.changed' && e.server === 'a_b');
    expect(renamed).toMatchObject({ removed: ['mcp_a_b_add', 'mcp_a_b_echo', 'mcp_a_b_reverse'], toolCount: 3 });
    if (renamed?.type !== 'tools.changed') throw new Error('no rename event');
    expect(renamed.added).toHaveLength(3);
    for (const name of renamed.added) expect(manager.getCatalogue().get(name)?.server).toBe('a_b');
  });

  it('refuses a header value that would make fetch quote a secret in its error', async () => {
    const { manager } = newManager();
    const secret = 'sk-live-SECRET123';
    const { errors } = await manager.connectServers({
      remote: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: `Bearer ${secret}\nsecond line` } },
    });
    expect(errors).toEqual([{ server: 'remote', error: { code: 'UPSTREAM_CONNECT_FAILED', message: expect.stringContaining('header "Authorization" has an invalid value') } }]);
    expect(JSON.stringify(manager.listServers())).not.toContain(secret);
  });
});
