import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { isSwitchboardError } from '../../src/errors.js';
import { connectToServer } from '../../src/upstream/transport/client.js';
import { deferred } from '../../src/util/deferred.js';
import { connectFixture, textOf } from '../helpers/connect.js';
import { bigText } from '../fixtures/servers/lib/big-text.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir, waitForFile, type Cleanup } from '../helpers/process.js';

// Concurrent (issue #34), but for the last describe (it changes process.env): each test waits on
// its own fixture (deadlines, progress, a 10 MB answer) with the box idle meanwhile; each owns its
// connection and temp dir, closed through its own context's onTestFinished (the global one may
// name another test while several run). Three at a time, as each starts a process; the describes
// run one after another.
vi.setConfig({ maxConcurrency: 3 });

describe('tools/list pagination', () => {
  it.concurrent('follows nextCursor across three pages', async ({ expect, onTestFinished }) => {
    const connection = await connectFixture('paginated', { env: { PAGES: '3', PAGE_SIZE: '2' } }, {}, onTestFinished);
    const { tools } = await connection.listTools();
    expect(tools.map((t) => t.name)).toEqual(['tool_0_0', 'tool_0_1', 'tool_1_0', 'tool_1_1', 'tool_2_0', 'tool_2_1']);
  });

  it.concurrent('lists 15 pages under one deadline without a MaxListenersExceededWarning', async ({ expect, onTestFinished }) => {
    // SDK v1 left an abort listener on the signal of every request, so the one deadline shared by
    // every page crossed Node's limit of 10 at the 11th page (v2 removes it when the request
    // settles). The setup file fails this test should any warning come back.
    const connection = await connectFixture('paginated', { env: { PAGES: '15', PAGE_SIZE: '1' } }, {}, onTestFinished);
    const { tools } = await connection.listTools({ timeoutMs: 20_000 });
    expect(tools).toHaveLength(15);
    expect(tools.at(-1)?.name).toBe('tool_14_0');
  });

  it.concurrent('fails clearly on a repeated cursor instead of looping', async ({ expect, onTestFinished }) => {
    const connection = await connectFixture('paginated', { env: { REPEAT_CURSOR: '1' } }, {}, onTestFinished);
    const error = await connection.listTools().catch((err: unknown) => err);
    expect(isSwitchboardError(error, 'UPSTREAM_CONNECT_FAILED')).toBe(true);
    expect((error as Error).message).toMatch(/cursor "page-1" twice/);
  });
});

describe('call deadlines and cancellation', () => {
  async function slowTool(cleanup: Cleanup) {
    const marker = join(await tempDir(cleanup), 'cancelled');
    const connection = await connectFixture('slow-tool', { env: { CANCEL_MARKER: marker } }, {}, cleanup);
    return { connection, marker };
  }

  it.concurrent('times out with TOOL_CALL_TIMEOUT and cancels the request upstream', async ({ expect, onTestFinished }) => {
    const { connection, marker } = await slowTool(onTestFinished);
    const error = await connection.callTool('slow', { durationMs: 60_000 }, { timeoutMs: 200 }).catch((err: unknown) => err);
    expect(isSwitchboardError(error, 'TOOL_CALL_TIMEOUT')).toBe(true);
    expect((error as Error).message).toMatch(/Tool "slow" timed out after 200 ms/);
    expect(await waitForFile(marker)).toMatch(/timed out/i);
  });

  it.concurrent('uses the configured callTimeout by default', async ({ expect, onTestFinished }) => {
    const connection = await connectToServer('slow', { ...fixtureServerConfig('slow-tool'), callTimeout: 150 });
    onTestFinished(() => connection.close());
    const error = await connection.callTool('slow', { durationMs: 60_000 }).catch((err: unknown) => err);
    expect(isSwitchboardError(error, 'TOOL_CALL_TIMEOUT')).toBe(true);
  });

  it.concurrent('keeps a caller abort an abort, and cancels the request upstream', async ({ expect, onTestFinished }) => {
    const { connection, marker } = await slowTool(onTestFinished);
    const controller = new AbortController();
    const call = connection.callTool('slow', { durationMs: 60_000, progressEveryMs: 20 }, { signal: controller.signal, onProgress: () => controller.abort() });
    const error = await call.catch((err: unknown) => err);
    expect(error).toBe(controller.signal.reason);
    expect((error as Error).name).toBe('AbortError');
    expect(await waitForFile(marker)).toMatch(/AbortError|aborted/);
  });

  it.concurrent('lets progress notifications reset the deadline', async ({ expect, onTestFinished }) => {
    const { connection } = await slowTool(onTestFinished);
    let progress = 0;
    // 1.2 s in total, far beyond the 400 ms deadline, but never 400 ms without a word.
    const result = await connection.callTool('slow', { durationMs: 1_200, progressEveryMs: 50 }, { timeoutMs: 400, onProgress: () => progress++ });
    expect(textOf(result)).toMatch(/^done after/);
    expect(progress).toBeGreaterThan(5);
  });

  it.concurrent('runs without a deadline when timeoutMs is 0', async ({ expect, onTestFinished }) => {
    const { connection } = await slowTool(onTestFinished);
    const result = await connection.callTool('slow', { durationMs: 300 }, { timeoutMs: 0 });
    expect(textOf(result)).toMatch(/^done after/);
  });
});

describe('results and server features', () => {
  it.concurrent('delivers a 10 MB result intact', async ({ expect, onTestFinished }) => {
    const connection = await connectFixture('introspect', {}, {}, onTestFinished);
    const bytes = 10 * 1024 * 1024;
    const text = textOf(await connection.callTool('big', { bytes }));
    expect(text.length).toBe(bytes);
    expect(text === bigText(bytes)).toBe(true);
  });

  it.concurrent('fires onToolsListChanged when the server adds a tool', async ({ expect, onTestFinished }) => {
    const connection = await connectFixture('list-changed', {}, {}, onTestFinished);
    const changed = deferred();
    connection.onToolsListChanged(() => changed.resolve());
    await connection.callTool('add_tool', { name: 'fresh_tool' });
    await changed.promise;
    expect((await connection.listTools()).tools.map((t) => t.name)).toContain('fresh_tool');
  });

  it.concurrent('keeps what the server wrote to stderr', async ({ expect, onTestFinished }) => {
    const connection = await connectFixture('introspect', {}, {}, onTestFinished);
    await connection.callTool('log_stderr', { lines: ['warming up', 'ready'] });
    // Closing waits for the child's stderr to end, so everything it wrote has been read by then.
    await connection.close();
    expect(connection.stderr.lines().slice(-2)).toEqual(['warming up', 'ready']);
    expect(connection.stderr.tail(1)).toBe('ready');
  });
});

describe('stdio environment', () => {
  function setDaemonEnv(name: string, value: string): void {
    const previous = process.env[name];
    process.env[name] = value;
    onTestFinished(() => {
      if (previous === undefined) delete process.env[name];
      else process.env[name] = previous;
    });
  }

  it('passes only the safe defaults, the allowlist and the configured env', async () => {
    setDaemonEnv('SWITCHBOARD_TEST_SECRET', 'do-not-leak');
    setDaemonEnv('SWITCHBOARD_TEST_SHARED', 'allowed');
    setDaemonEnv('SWITCHBOARD_TEST_OVERRIDE', 'from-daemon');
    const connection = await connectFixture(
      'introspect',
      { env: { FROM_CONFIG: 'configured', SWITCHBOARD_TEST_OVERRIDE: 'from-config' } },
      { inheritEnv: ['SWITCHBOARD_TEST_SHARED', 'SWITCHBOARD_TEST_OVERRIDE'] },
    );
    const env = JSON.parse(textOf(await connection.callTool('env', {}))) as Record<string, string>;
    expect(env).not.toHaveProperty('SWITCHBOARD_TEST_SECRET');
    expect(env.SWITCHBOARD_TEST_SHARED).toBe('allowed');
    expect(env.SWITCHBOARD_TEST_OVERRIDE).toBe('from-config');
    expect(env.FROM_CONFIG).toBe('configured');
    expect(env.PATH).toBe(process.env.PATH);
    const allowed = new Set(['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'SWITCHBOARD_TEST_SHARED', 'SWITCHBOARD_TEST_OVERRIDE', 'FROM_CONFIG']);
    // Node and tsx may add a few variables of their own inside the child; none comes from the daemon.
    const leaked = Object.keys(env).filter((name) => !allowed.has(name) && process.env[name] === env[name]);
    expect(leaked).toEqual([]);
  });
});
