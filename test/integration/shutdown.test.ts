import type { ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it, vi } from 'vitest';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { isProcessGone, killThrough, readPidFile, tempDir, waitForFile, type Cleanup, type PidFile } from '../helpers/process.js';
import { rawRequest } from '../helpers/raw-http.js';
import { spawnServe, type LogEntry } from '../helpers/serve-process.js';
import { mcpClient } from '../helpers/mcp-client.js';

/**
 * SIGTERM/SIGINT on a real `switchboard serve` process (SPEC §1.7): the daemon keeps listening
 * while in-flight calls drain within `shutdownGraceMs` (`/health` 200, everything else 503), every
 * server is disconnected (no child process left), the process exits 0; a second signal forces
 * exit 1.
 */

/** A real daemon process plus its fixture servers: a loaded two-core box needs the time. */
const SPAWN_TIMEOUT_MS = 60_000;

interface ServeProcess {
  child: ChildProcess;
  url: string;
  waitForLog(match: (entry: LogEntry) => boolean): Promise<LogEntry>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

interface SlowServe extends ServeProcess {
  fixture: PidFile;
  /** The test's temp directory (config, pid file), for its marker files. */
  dir: string;
}

/**
 * Starts `serve` with the slow-tool fixture (and its grandchild, and a helper that left its process
 * group with setsid) and waits for the startup gate; everything is gone when the test finishes.
 */
async function serveSlowTool(onTestFinished: Cleanup, config: Record<string, unknown> = {}): Promise<SlowServe> {
  const dir = await tempDir(onTestFinished);
  const pidFile = join(dir, 'slow.pid');
  const configPath = join(dir, 'switchboard.json');
  const slow = fixtureServerConfig('slow-tool', { env: { PID_FILE: pidFile, SPAWN_GRANDCHILD: '1', SPAWN_SETSID_GRANDCHILD: '1' } });
  await writeFile(configPath, JSON.stringify({ dbPath: join(dir, 'cache.db'), mcpServers: { slow }, ...config }));

  const spawned = spawnServe(['--config', configPath, '--port', '0'], { home: dir, cwd: dir }, onTestFinished);
  const serve = { ...spawned, url: await spawned.listening() };
  await serve.waitForLog((entry) => entry.msg === 'ready');
  await waitForFile(pidFile);
  const fixture = await readPidFile(pidFile);
  // Whatever the test does to the daemon, leave no fixture behind.
  killThrough(onTestFinished, fixture.pid, fixture.grandchildPid, fixture.setsidPid);
  return { ...serve, fixture, dir };
}

function callSlow(url: string, args: { durationMs: number; untilFile?: string; startedFile?: string }): Promise<{ status: number; body: unknown }> {
  return fetch(`${url}/tools/mcp_slow_slow/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: args }),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as unknown }));
}

/** An MCP client on the daemon's /mcp (a 2025-era session, or pinned to 2026-07-28), closed when the test ends. */
/**
 * A slow call in flight: resolves once the fixture has it (its `startedFile` written), so a
 * signal sent next finds it running, with the call's answer to come (wrapped: an async function
 * returning the promise itself would wait for it).
 */
async function slowCallInFlight(serve: SlowServe, name: string, args: { durationMs: number; untilFile?: string }): Promise<{ answer: Promise<{ status: number; body: unknown }> }> {
  const startedFile = join(serve.dir, `${name}-started`);
  const answer = callSlow(serve.url, { ...args, startedFile });
  await waitForFile(startedFile);
  return { answer };
}

/**
 * Each test has its own `serve`, fixture processes and temp dir, and waits mostly on them (starts,
 * drains, exits): they run side by side, three at a time (the cap is this file's: vitest resets it
 * after the file), registering their cleanups and asserting through their own context.
 */
vi.setConfig({ maxConcurrency: 3 });

describe.concurrent('serve shutdown', () => {
  it(
    'SIGTERM lets an in-flight call finish, then exits 0 with no child process left',
    async ({ expect, onTestFinished }) => {
      const serve = await serveSlowTool(onTestFinished);
      expect(isProcessGone(serve.fixture.pid)).toBe(false);

      // The call runs until the test writes `release`, after the daemon began shutting down.
      const release = join(serve.dir, 'release');
      const { answer: call } = await slowCallInFlight(serve, 'call', { durationMs: 0, untilFile: release });
      serve.child.kill('SIGTERM');
      await serve.waitForLog((entry) => entry.msg === 'shutting down');
      await writeFile(release, 'go');

      const { status, body } = await call;
      expect(status).toBe(200);
      expect(body).toMatchObject({ content: [{ type: 'text', text: expect.stringMatching(/^done after \d+ ms/) }] });
      expect(body).not.toHaveProperty('isError', true);

      expect(await serve.exited).toEqual({ code: 0, signal: null });
      await serve.waitForLog((entry) => entry.msg === 'stopped');
      expect(isProcessGone(serve.fixture.pid)).toBe(true);
      expect(isProcessGone(serve.fixture.grandchildPid!)).toBe(true);
      expect(isProcessGone(serve.fixture.setsidPid!)).toBe(true);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'SIGHUP (the terminal or SSH session closed) stops as SIGTERM does: shutdown line, exit 0, no child process left',
    async ({ expect, onTestFinished }) => {
      const serve = await serveSlowTool(onTestFinished);
      expect(isProcessGone(serve.fixture.pid)).toBe(false);

      serve.child.kill('SIGHUP');
      expect(await serve.waitForLog((entry) => entry.msg === 'shutting down')).toMatchObject({ signal: 'SIGHUP' });
      expect(await serve.exited).toEqual({ code: 0, signal: null });
      await serve.waitForLog((entry) => entry.msg === 'stopped');
      // Checked the moment the daemon is gone: its teardown, not the watchdog's later sweep, ended them.
      for (const pid of [serve.fixture.pid, serve.fixture.grandchildPid!, serve.fixture.setsidPid!]) expect(isProcessGone(pid), String(pid)).toBe(true);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'drains like a server still alive: /health 200, other routes 503 SHUTTING_DOWN with Connection: close, REST and /mcp calls (both eras) in flight finish',
    async ({ expect, onTestFinished }) => {
      const serve = await serveSlowTool(onTestFinished);
      const dir = await tempDir(onTestFinished);
      const release = join(dir, 'release');
      // Both calls run until the test writes `release`: the drain is observed, not raced.
      const rest = callSlow(serve.url, { durationMs: 0, untilFile: release, startedFile: join(dir, 'rest-started') });
      // One /mcp call per protocol era: a 2025 session's POST and a stateless 2026-07-28 one.
      const mcp = await Promise.all(
        (['legacy', 'modern'] as const).map(async (era) => {
          const client = await mcpClient(serve.url, { era: era === 'legacy' ? 'legacy' : { pin: '2026-07-28' }, name: 'shutdown-test', cleanup: onTestFinished });
          const args = { durationMs: 0, untilFile: release, startedFile: join(dir, `${era}-started`) };
          return { call: client.callTool({ name: 'mcp_slow_slow', arguments: args }, { timeout: 30_000 }) };
        }),
      );
      await Promise.all(['rest', 'legacy', 'modern'].map((name) => waitForFile(join(dir, `${name}-started`))));

      serve.child.kill('SIGTERM');
      await serve.waitForLog((entry) => entry.msg === 'shutting down');

      const health = await rawRequest(`${serve.url}/health`);
      expect(health.status).toBe(200);
      const status = await rawRequest(`${serve.url}/status`);
      expect(status.status).toBe(503);
      expect(status.headers.connection).toBe('close');
      expect(JSON.parse(status.body)).toMatchObject({ error: { code: 'SHUTTING_DOWN' } });
      const another = await callSlow(serve.url, { durationMs: 10 });
      expect(another).toMatchObject({ status: 503, body: { error: { code: 'SHUTTING_DOWN' } } });

      await writeFile(release, 'go');
      const done = expect.stringMatching(/^done after \d+ ms/);
      expect(await rest).toMatchObject({ status: 200, body: { content: [{ type: 'text', text: done }] } });
      for (const { call } of mcp) expect(await call).toMatchObject({ content: [{ type: 'text', text: done }] });
      expect(await serve.exited).toEqual({ code: 0, signal: null });
      for (const pid of [serve.fixture.pid, serve.fixture.grandchildPid!, serve.fixture.setsidPid!]) expect(isProcessGone(pid)).toBe(true);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'cancels a call that outlives shutdownGraceMs with SHUTTING_DOWN, still exiting 0 and cleanly',
    async ({ expect, onTestFinished }) => {
      const serve = await serveSlowTool(onTestFinished, { shutdownGraceMs: 200 });

      const { answer: call } = await slowCallInFlight(serve, 'call', { durationMs: 60_000 });
      serve.child.kill('SIGINT');

      const { status, body } = await call;
      expect(status).toBe(503);
      expect(body).toMatchObject({ error: { code: 'SHUTTING_DOWN' } });
      expect(await serve.exited).toEqual({ code: 0, signal: null });
      expect(isProcessGone(serve.fixture.pid)).toBe(true);
      expect(isProcessGone(serve.fixture.grandchildPid!)).toBe(true);
      expect(isProcessGone(serve.fixture.setsidPid!)).toBe(true);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'a second signal during the drain forces exit 1',
    async ({ expect, onTestFinished }) => {
      const serve = await serveSlowTool(onTestFinished, { shutdownGraceMs: 60_000 });

      const call = (await slowCallInFlight(serve, 'call', { durationMs: 60_000 })).answer.catch((err: unknown) => err);
      serve.child.kill('SIGTERM');
      await serve.waitForLog((entry) => entry.msg === 'shutting down');
      serve.child.kill('SIGTERM');

      expect(await serve.exited).toEqual({ code: 1, signal: null });
      // The socket died with the process: the call fails rather than hanging.
      expect(await call).toBeInstanceOf(Error);
    },
    SPAWN_TIMEOUT_MS,
  );
});
