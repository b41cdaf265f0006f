import { join } from 'node:path';
import { describe, it, vi, type ExpectStatic } from 'vitest';
import type { ServerConfig } from '../../src/config/types.js';
import { isSwitchboardError } from '../../src/errors.js';
import { connectToServer, type ServerConnection } from '../../src/upstream/transport/client.js';
import { deferred } from '../../src/util/deferred.js';
import { connectFixture, textOf } from '../helpers/connect.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { isProcessGone, readPidFile, tempDir, waitForFile, type Cleanup } from '../helpers/process.js';

/** Env that makes a fixture start a grandchild and report both pids; its temp dir removed through `cleanup`. */
async function pidReporting(cleanup: Cleanup): Promise<{ pidFile: string; env: Record<string, string> }> {
  const pidFile = join(await tempDir(cleanup), 'pids.json');
  return { pidFile, env: { PID_FILE: pidFile, SPAWN_GRANDCHILD: '1' } };
}

/**
 * Fixture `name` behind an `sh -c` wrapper, as `npx` and shell one-liners are in real configs. The
 * wrapper starts a background `sleep` (a grandchild once sh execs node), writes both pids, then
 * execs the fixture: the pids exist within milliseconds of the spawn, long before any deadline.
 */
function shWrapped(name: string, pidFile: string): ServerConfig {
  const inner = fixtureServerConfig(name);
  const script = `sleep 1000 & printf '{"pid":%d,"grandchildPid":%d}' $$ $! > "$WRAPPER_PID_FILE"; exec "$@"`;
  // Not PID_FILE: the fixture itself would overwrite that file with its own pid alone.
  return { command: 'sh', args: ['-c', script, 'sh', inner.command!, ...inner.args!], env: { WRAPPER_PID_FILE: pidFile } };
}

async function expectFamilyGone(pidFile: string, expect: ExpectStatic): Promise<void> {
  const { pid, grandchildPid } = await readPidFile(pidFile);
  expect(grandchildPid).toBeGreaterThan(0);
  expect(isProcessGone(pid)).toBe(true);
  expect(isProcessGone(grandchildPid!)).toBe(true);
}

// Concurrent (issue #34): each test waits on its own process (a deadline, an exit, a close) with
// the box idle meanwhile; each owns its connection and temp dir, closed through its own context's
// onTestFinished (the global one may name another test while several run). Three at a time, as
// each starts processes; the describes run one after another.
vi.setConfig({ maxConcurrency: 3 });

describe('connect failures', () => {
  it.concurrent('times out against a server that never answers initialize, killing child and grandchild', async ({ expect, onTestFinished }) => {
    const pidFile = join(await tempDir(onTestFinished), 'pids.json');
    const error = await connectToServer('hang', shWrapped('never-answers-initialize', pidFile), {
      timeoutMs: 1_500,
    }).catch((err: unknown) => err);
    expect(isSwitchboardError(error, 'UPSTREAM_CONNECT_TIMEOUT')).toBe(true);
    expect((error as Error).message).toMatch(/"hang" timed out after 1500 ms/);
    await expectFamilyGone(pidFile, expect);
  });

  it.concurrent('rejects with the caller abort reason and kills child and grandchild', async ({ expect, onTestFinished }) => {
    const pidFile = join(await tempDir(onTestFinished), 'pids.json');
    const controller = new AbortController();
    const connecting = connectToServer('hang', shWrapped('never-answers-initialize', pidFile), {
      signal: controller.signal,
      timeoutMs: 0,
    });
    await waitForFile(pidFile);
    const reason = new Error('daemon shutting down');
    controller.abort(reason);
    await expect(connecting).rejects.toBe(reason);
    await expectFamilyGone(pidFile, expect);
  });

  it.concurrent('reports a server that exits at start with its exit code and stderr tail', async ({ expect }) => {
    const error = await connectToServer('dies', fixtureServerConfig('exits-at-start', { env: { EXIT_CODE: '7' } })).catch((err: unknown) => err);
    expect(isSwitchboardError(error, 'UPSTREAM_CONNECT_FAILED')).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain('exited with code 7');
    expect(message).toContain('stderr:\nstarting exits-at-start\nfatal: missing API key');
    expect((error as Error).cause).toBeDefined();
  });

  it.concurrent('reports a command that cannot be spawned', async ({ expect }) => {
    const error = await connectToServer('missing', { command: '/nonexistent/mcp-server' }).catch((err: unknown) => err);
    expect(isSwitchboardError(error, 'UPSTREAM_CONNECT_FAILED')).toBe(true);
    expect((error as Error).message).toMatch(/ENOENT/);
  });

  it.concurrent('waits for a slow initialize within the timeout', async ({ expect, onTestFinished }) => {
    const connection = await connectFixture('slow-initialize', { env: { INIT_DELAY_MS: '300' } }, { timeoutMs: 20_000 }, onTestFinished);
    expect(textOf(await connection.callTool('echo', { text: 'late' }))).toBe('late');
  });
});

describe('close', () => {
  it.concurrent('kills the child and its grandchild', async ({ expect, onTestFinished }) => {
    const { pidFile, env } = await pidReporting(onTestFinished);
    const connection = await connectFixture('echo-stdio', { env }, {}, onTestFinished);
    const { pid } = await readPidFile(pidFile);
    expect(connection.pid).toBe(pid);
    await connection.close();
    await expectFamilyGone(pidFile, expect);
  });

  it.concurrent('is idempotent and joinable: the second call returns the first promise', async ({ expect, onTestFinished }) => {
    const connection = await connectFixture('echo-stdio', {}, {}, onTestFinished);
    const first = connection.close();
    expect(connection.close()).toBe(first);
    await first;
    expect(connection.close()).toBe(first);
  });

  it.concurrent('rejects calls made after it with SERVER_CLOSED', async ({ expect, onTestFinished }) => {
    const connection = await connectFixture('echo-stdio', {}, {}, onTestFinished);
    await connection.close();
    for (const attempt of [connection.callTool('echo', { text: 'x' }), connection.listTools(), connection.ping()]) {
      const error = await attempt.catch((err: unknown) => err);
      expect(isSwitchboardError(error, 'SERVER_CLOSED')).toBe(true);
    }
  });

  it.concurrent('ends a call in flight with SERVER_CLOSED', async ({ expect, onTestFinished }) => {
    const connection = await connectFixture('slow-tool', {}, {}, onTestFinished);
    const progressed = deferred();
    const call = connection.callTool('slow', { durationMs: 60_000, progressEveryMs: 20 }, { onProgress: () => progressed.resolve() });
    await progressed.promise;
    await connection.close();
    const error = await call.catch((err: unknown) => err);
    expect(isSwitchboardError(error, 'SERVER_CLOSED')).toBe(true);
  });

  it.concurrent('does not fire onClose', async ({ expect, onTestFinished }) => {
    const connection = await connectFixture('echo-stdio', {}, {}, onTestFinished);
    const reasons: Error[] = [];
    connection.onClose((reason) => reasons.push(reason));
    await connection.close();
    expect(reasons).toEqual([]);
  });
});

describe('a server that dies after initialize', () => {
  it.concurrent('fires onClose once, with the exit code and stderr tail, and later calls get SERVER_CLOSED', async ({ expect, onTestFinished }) => {
    const connection = await connectFixture('exits-after-initialize', { env: { EXIT_AFTER_MS: '50' } }, {}, onTestFinished);
    const closed = deferred<Error>();
    const calls: Error[] = [];
    connection.onClose((reason) => {
      calls.push(reason);
      closed.resolve(reason);
    });
    const reason = await closed.promise;
    expect(isSwitchboardError(reason, 'SERVER_CLOSED')).toBe(true);
    expect(reason.message).toContain('exited with code 2');
    expect(reason.message).toContain('fatal: exits-after-initialize crashed');
    expect(connection.stderr.lines()).toContain('fatal: exits-after-initialize crashed');

    const error = await connection.callTool('echo', { text: 'x' }).catch((err: unknown) => err);
    expect(isSwitchboardError(error, 'SERVER_CLOSED')).toBe(true);
    expect((error as Error).message).toContain('fatal: exits-after-initialize crashed');
    await connection.close();
    expect(calls).toHaveLength(1);
  });

  it.concurrent('lets a listener unsubscribe', async ({ expect, onTestFinished }) => {
    const connection: ServerConnection = await connectFixture('exits-after-initialize', { env: { EXIT_AFTER_MS: '50' } }, {}, onTestFinished);
    const removed: Error[] = [];
    const off = connection.onClose((reason) => removed.push(reason));
    const closed = deferred<Error>();
    connection.onClose((reason) => closed.resolve(reason));
    off();
    await closed.promise;
    expect(removed).toEqual([]);
  });
});
