import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Daemon } from '../../src/daemon.js';
import { discoverAndLoadMCPTools } from '../../src/loader.js';
import { nextDaemonEvent, startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig, startFixtureHttp } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/process.js';
import { callTool } from '../helpers/route-call.js';

describe('embedding the runtime (discoverAndLoadMCPTools)', () => {
  it('discovers a real config tree, connects stdio and Streamable HTTP servers, and calls through them', async () => {
    const home = await tempDir();
    const cwd = await tempDir();
    const http = await startFixtureHttp('echo-http');
    onTestFinished(() => http.close());
    await writeFile(join(cwd, '.mcp.json'), JSON.stringify({ mcpServers: { local: fixtureServerConfig('echo-stdio'), remote: { type: 'http', url: http.url } } }));

    const { tools, errors, manager, runtime } = await discoverAndLoadMCPTools(cwd, { home, env: {} });
    onTestFinished(() => runtime.close());

    expect(errors).toEqual([]);
    expect(tools.map((t) => t.name)).toEqual(['mcp_local_add', 'mcp_local_echo', 'mcp_local_reverse', 'mcp_remote_add', 'mcp_remote_echo', 'mcp_remote_reverse']);
    expect(tools[0]?.path).toBe('mcp:local via Project');
    expect(await callTool(manager, 'mcp_local_echo', { text: 'over stdio' })).toEqual({
      content: [{ type: 'text', text: 'over stdio' }],
    });
    expect(await callTool(manager, 'mcp_remote_add', { a: 2, b: 3 })).toMatchObject({ structuredContent: { sum: 5 } });
  });

  it('reports a server that fails without hiding the ones that work', async () => {
    const home = await tempDir();
    const cwd = await tempDir();
    await writeFile(join(cwd, '.mcp.json'), JSON.stringify({ mcpServers: { ok: fixtureServerConfig('echo-stdio'), dead: fixtureServerConfig('exits-at-start') } }));
    const { tools, errors, runtime } = await discoverAndLoadMCPTools(cwd, { home, env: {} });
    onTestFinished(() => runtime.close());
    expect(errors.map((e) => e.path)).toEqual(['dead']);
    expect(new Set(tools.map((t) => t.server))).toEqual(new Set(['ok']));
  });
});

describe('the daemon survives what would stop a simpler one', () => {
  it('a hard discovery failure gives no tools and the synthetic .mcp.json error; the daemon keeps serving', async () => {
    const daemon = await startDaemon({
      discover: () => Promise.reject(new Error('loader exploded')),
    });
    expect((await daemon.fetch('/health')).status).toBe(200);
    expect((await daemon.fetch('/ready')).status).toBe(200);
    const tools = await daemon.json<{ tools: unknown[] }>('/tools');
    expect(tools.body.tools).toEqual([]);
    const status = await daemon.json<{ errors: unknown[]; discovery: { error: unknown } }>('/status');
    expect(status.body.errors).toEqual([{ path: '.mcp.json', error: { code: 'DISCOVERY_FAILED', message: 'loader exploded' } }]);
    expect(status.body.discovery.error).toEqual({ code: 'DISCOVERY_FAILED', message: 'loader exploded' });
  });

  it('a corrupt cache file is moved aside: the daemon starts, serves tools and says so in /status', async () => {
    const dir = await tempDir();
    const dbPath = join(dir, 'state', 'switchboard.db');
    await mkdir(join(dir, 'state'));
    await writeFile(dbPath, 'this is not a database, it is a sentence that is long enough');

    const daemon = await startDaemon({ servers: { echo: fixtureServerConfig('echo-stdio') }, config: { dbPath } });

    const status = await daemon.json<{ storeWarnings: string[]; toolCount: number }>('/status');
    expect(status.body.storeWarnings).toHaveLength(1);
    expect(status.body.storeWarnings[0]).toMatch(/corrupt|moved/i);
    expect(status.body.toolCount).toBe(3);
  });
});

describe('teardown never waits on a server that does not answer', () => {
  const hanging = () => ({ ...fixtureServerConfig('never-answers-initialize'), timeout: 0 });
  /** Resolves once `name` is connecting; the check and the subscription happen in one tick. */
  const untilConnecting = async (daemon: Pick<Daemon, 'manager' | 'bus'>, name: string): Promise<void> => {
    if (daemon.manager.getConnectionStatus(name) === 'connecting') return;
    await nextDaemonEvent(daemon, 'server.status', (e) => e.server === name && e.status === 'connecting');
  };

  it('disconnecting a server still connecting answers at once and frees the startup', async () => {
    const daemon = await startDaemon({
      servers: { hang: hanging(), echo: fixtureServerConfig('echo-stdio') },
      until: 'listening',
    });
    await untilConnecting(daemon.daemon, 'hang');

    const disconnected = await daemon.json<{ status: string }>('/servers/hang/disconnect', { method: 'POST' });

    expect(disconnected.status).toBe(200);
    expect(disconnected.body.status).toBe('disconnected');
    await daemon.daemon.start();
    expect((await daemon.fetch('/ready')).status).toBe(200);
    expect(daemon.daemon.manager.getConnectionStatus('echo')).toBe('connected');
  });

  it('close() during a startup that awaits a hanging server finishes, leaving no child', async () => {
    const daemon = await startDaemon({ servers: { hang: hanging() }, until: 'listening' });
    await untilConnecting(daemon.daemon, 'hang');

    await daemon.close();

    expect(daemon.daemon.runtime.state).toBe('stopped');
    expect(daemon.daemon.manager.listServers()).toEqual([]);
  });
});
