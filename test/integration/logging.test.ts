import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatLine } from '../../src/log-pretty.js';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { holdInitialize } from '../helpers/hold-initialize.js';
import { tempDir } from '../helpers/process.js';
import { spawnServe } from '../helpers/serve-process.js';

/** Issue #15, item 3: logs a person can read, and no error lines for what is not an error. */

const SPAWN_TIMEOUT_MS = 60_000;
const LEVEL_ERROR = 50;
const LEVEL_WARN = 40;

describe('log levels', () => {
  it('logs /ready 503s during startup at debug, never as errors', async () => {
    const hold = await holdInitialize();
    const d = await startDaemon({
      servers: { slow: fixtureServerConfig('echo-stdio', { env: hold.env }) },
      captureLogs: 'debug',
      until: 'listening',
    });
    // With no cache entry, the gate waits for the held server: /ready is 503 until it answers.
    for (let i = 0; i < 3; i++) expect((await d.fetch('/ready')).status).toBe(503);
    await hold.release();
    await d.daemon.start();
    expect((await d.fetch('/ready')).status).toBe(200);
    const entries = d.logs.entries();
    expect(entries.filter((e) => (e.level as number) >= LEVEL_ERROR)).toEqual([]);
    expect(entries.filter((e) => e.code === 'NOT_READY').map((e) => e.level)).toEqual([20, 20, 20]);
  });

  it('logs a server failure once per transition, not once per request', async () => {
    const d = await startDaemon({
      servers: { dead: fixtureServerConfig('exits-at-start'), echo: fixtureServerConfig('echo-stdio') },
      captureLogs: 'info',
    });
    for (let i = 0; i < 5; i++) {
      expect((await d.fetch('/servers/dead')).status).toBe(200);
      expect((await d.fetch('/tools?server=dead')).status).toBe(200);
      expect((await d.fetch('/status')).status).toBe(200);
    }
    const aboutDead = d.logs.entries().filter((e) => e.server === 'dead' && (e.level as number) >= LEVEL_WARN);
    expect(aboutDead).toEqual([expect.objectContaining({ msg: 'server failed', level: LEVEL_WARN })]);
  });
});

describe('switchboard serve log format', () => {
  async function configFile(): Promise<{ home: string; path: string }> {
    const home = await tempDir();
    const path = join(home, 'switchboard.json');
    await writeFile(path, JSON.stringify({ dbPath: join(home, 'db'), mcpServers: { echo: fixtureServerConfig('echo-stdio') } }));
    return { home, path };
  }

  it(
    '--log-format pretty: human lines, a startup summary with each server, no JSON',
    async () => {
      const { home, path } = await configFile();
      const serve = spawnServe(['--config', path, '--port', '0', '--log-format', 'pretty'], { home, cwd: home });
      const listening = await serve.waitForLine((line) => line.includes('listening on'));
      expect(listening).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}listening on http:\/\/127\.0\.0\.1:\d+/);
      const ready = await serve.waitForLine((line) => / INFO {2}ready /.test(line));
      expect(ready).toMatch(/ready\s+mcp=http:\/\/127\.0\.0\.1:\d+\/mcp ms=\d+ tools=3 cacheHits=0 failed=0 servers=1$/);
      const summary = await serve.waitForLine((line) => line.startsWith('    echo '));
      expect(summary).toMatch(/^ {4}echo status=connected tools=3 ms=\d+ cached=false$/);
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toEqual({ code: 0, signal: null });
      expect(serve.lines().filter((line) => line.startsWith('{'))).toEqual([]);
    },
    SPAWN_TIMEOUT_MS,
  );

  // `serve --log-format pretty | head -1`, or the terminal of a pretty log closed: the next line
  // failed with EPIPE (EIO) on an unheard stream 'error', and the daemon died with exit code 1.
  it(
    '--log-format pretty whose reader goes away: the daemon goes on serving, and stops cleanly (exit 0)',
    async () => {
      const { home, path } = await configFile();
      const serve = spawnServe(['--config', path, '--port', '0', '--log-format', 'pretty'], { home, cwd: home });
      const url = /listening on (http:\/\/\S+)/.exec(await serve.waitForLine((line) => line.includes('listening on')))![1]!;
      await serve.waitForLine((line) => / INFO {2}ready /.test(line));
      serve.child.stdout!.destroy();
      // Each logs a line into the broken pipe: a reload and a failed request, then the stop's own.
      expect((await fetch(`${url}/reload`, { method: 'POST' })).status).toBe(200);
      expect((await fetch(`${url}/servers/nope`)).status).toBe(404);
      expect((await fetch(`${url}/health`)).status).toBe(200);
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toEqual({ code: 0, signal: null });
      expect(serve.stderr()).not.toMatch(/EPIPE|Unhandled/);
    },
    SPAWN_TIMEOUT_MS,
  );
});

describe('formatLine', () => {
  it('puts time, level, component/server and message first, fields after, multi-line values below', () => {
    const line = JSON.stringify({
      level: 40,
      time: '2026-01-02T03:04:05.678Z',
      name: 'switchboard',
      server: 'gh',
      msg: 'server failed',
      from: 'connecting',
      err: 'Could not connect\nstderr:\nboom',
    });
    const text = formatLine(line);
    expect(text).toMatch(/^\d\d:\d\d:\d\d\.678 WARN {2}\[gh\] server failed {2}from=connecting\n {4}err: Could not connect\n {6}stderr:\n {6}boom$/);
    expect(formatLine('not json')).toBe('not json');
  });
});
