import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nextDaemonEvent, startDaemon } from '../helpers/daemon.js';
import { fixturePath, fixtureServerConfig } from '../helpers/fixtures.js';
import { holdInitialize } from '../helpers/hold-initialize.js';
import { SOCAT, hostedConnections } from '../helpers/stdio-fixture-host.js';

/**
 * test/helpers/stdio-fixture-host.ts: stdio fixtures served from the test worker behind a socat
 * child. The daemon still spawns, signals and reaps a real child; the fixture's server code
 * answers in the worker, one server per connection. The suite needs Debian's socat as it needs
 * its PostgreSQL and nginx (.ci/run installs them all); without it every fixture would be a node
 * process again, and this file says so.
 */

interface CallResult {
  content: Array<{ type: string; text: string }>;
}

/** The command line of process `pid`, as the kernel has it. */
function commandLine(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
}

describe('stdio fixtures hosted in the test worker', () => {
  it('a config without process behaviour runs socat; one with PID_FILE, args or process: true runs the bundle with node', () => {
    expect(SOCAT, 'socat is not on PATH: apt-get install socat (.ci/run does)').toBeDefined();
    expect(fixtureServerConfig('echo-stdio').command).toBe(SOCAT);
    for (const name of [
      'slow-initialize',
      'slow-tool',
      'rich-stdio',
      'pinning',
      'policy-target',
      'list-changed',
      'era-stdio',
      'big-results',
      'paginated',
      'trace-meta',
      'task-tools',
      'native-tasks',
    ]) {
      expect(fixtureServerConfig(name).command, name).toBe(SOCAT);
    }
    // A held `initialize` is held by the host (next test).
    expect(fixtureServerConfig('echo-stdio', { env: { HOLD_INITIALIZE_WHILE: '/nonexistent/hold' } }).command).toBe(SOCAT);
    for (const own of [
      fixtureServerConfig('echo-stdio', { env: { PID_FILE: '/nonexistent/pid' } }),
      fixtureServerConfig('echo-stdio', { args: ['--anything'] }),
      fixtureServerConfig('echo-stdio', { process: true }),
      fixtureServerConfig('rich-stdio', { env: { STDERR_AT_START: 'hello' } }),
      fixtureServerConfig('echo-stdio', { env: { HOLD_START_WHILE: '/nonexistent/hold' } }),
      fixtureServerConfig('many-tools'),
    ]) {
      expect(own.command).toBe(process.execPath);
      expect(own.args?.[0]).toMatch(/\.mjs$/);
    }
    expect(fixtureServerConfig('many-tools').args?.[0]).toBe(fixturePath('many-tools'));
  });

  it('serves the fixture through the daemon’s child, and a new connection per start (reload)', async ({ onTestFinished }) => {
    const before = hostedConnections();
    const sb = await startDaemon({ servers: { echo: fixtureServerConfig('echo-stdio'), slow: fixtureServerConfig('slow-tool') } });
    onTestFinished(() => sb.close());
    const pidOf = async (): Promise<number | null> => (await sb.json<{ pid: number | null }>('/servers/echo')).body.pid;
    const first = await pidOf();
    expect(first).not.toBeNull();
    expect(commandLine(first as number)).toContain('socat STDIO UNIX-CONNECT:');

    const echoed = await sb.json<CallResult>('/tools/mcp_echo_echo/call', { method: 'POST', body: { arguments: { text: 'through socat' } } });
    expect(echoed.status).toBe(200);
    expect(echoed.body.content[0]?.text).toBe('through socat');
    const slow = await sb.json<CallResult>('/tools/mcp_slow_slow/call', { method: 'POST', body: { arguments: { durationMs: 1 } } });
    expect(slow.body.content[0]?.text).toMatch(/^done after \d+ ms, 0 progress notifications$/);

    expect((await sb.json('/servers/echo/reload', { method: 'POST' })).status).toBe(200);
    const second = await pidOf();
    expect(second).not.toBe(first);
    const again = await sb.json<CallResult>('/tools/mcp_echo_reverse/call', { method: 'POST', body: { arguments: { text: 'abc' } } });
    expect(again.body.content[0]?.text).toBe('cba');
    // Two servers started, then one again: one connection per start, none shared.
    expect(hostedConnections() - before).toBe(3);
  });

  it('holds a hosted server’s initialize while HOLD_INITIALIZE_WHILE’s file exists, and answers it on the same connection once the file is gone', async () => {
    const hold = await holdInitialize();
    const before = hostedConnections();
    const sb = await startDaemon({ servers: { held: fixtureServerConfig('echo-stdio', { env: hold.env }) }, until: 'listening' });
    // The connection reached this worker's host: unheld, its `initialize` is answered at once.
    await expect.poll(hostedConnections).toBe(before + 1);
    const status = async (): Promise<string> => (await sb.json<{ status: string }>('/servers/held')).body.status;
    expect(await status()).toBe('connecting');
    const connected = nextDaemonEvent(sb.daemon, 'server.status', (e) => e.server === 'held' && e.status === 'connected');
    await hold.release();
    await connected;
    expect(hostedConnections()).toBe(before + 1);
    const echoed = await sb.json<CallResult>('/tools/mcp_held_echo/call', { method: 'POST', body: { arguments: { text: 'released' } } });
    expect(echoed.body.content[0]?.text).toBe('released');
  });
});
