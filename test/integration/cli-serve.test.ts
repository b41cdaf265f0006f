import { EventEmitter } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runServe } from '../../src/cli/serve.js';
import { bindRefusal, parseServeFlags, ServeExit } from '../../src/cli/serve-flags.js';
import { handleShutdownSignals } from '../../src/cli/shutdown-signals.js';
import { isLoopbackHost } from '../../src/util/loopback.js';
import type { ServerConfig } from '../../src/config/types.js';
import { closed, nextEvent, openEvents } from '../helpers/events.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/process.js';
import { spawnServe } from '../helpers/serve-process.js';

/** A real daemon process plus its fixture servers: a loaded two-core box needs the time. */
const SPAWN_TIMEOUT_MS = 60_000;

async function writeConfig(dir: string, config: { mcpServers?: Record<string, ServerConfig> } & Record<string, unknown>): Promise<string> {
  const path = join(dir, 'switchboard.json');
  await writeFile(path, JSON.stringify({ dbPath: join(dir, 'cache.db'), ...config }));
  return path;
}

describe('isLoopbackHost / bindRefusal', () => {
  it('treats 127.0.0.0/8, ::1 in any spelling and localhost as loopback', () => {
    for (const host of ['127.0.0.1', '127.8.9.10', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', '::ffff:10.0.0.1', 'example.com', 'localhost.example.com']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });

  it('refuses a non-loopback host without a token unless --insecure', () => {
    expect(bindRefusal({ host: '127.0.0.1', insecure: false })).toBeUndefined();
    expect(bindRefusal({ host: '0.0.0.0', insecure: false })).toMatch(/refusing to listen on non-loopback host "0.0.0.0"/);
    expect(bindRefusal({ host: '0.0.0.0', token: 't', insecure: false })).toBeUndefined();
    expect(bindRefusal({ host: '0.0.0.0', insecure: true })).toBeUndefined();
  });
});

describe('parseServeFlags', () => {
  it('parses every flag and rejects bad ones with exit 2', () => {
    expect(parseServeFlags(['--config', 'c.json', '--host', '::1', '--port', '0', '--cwd', 'd', '--no-project-config', '--insecure'])).toEqual({
      config: 'c.json',
      host: '::1',
      port: 0,
      cwd: 'd',
      noProjectConfig: true,
      insecure: true,
      help: false,
    });
    expect(parseServeFlags(['--log-format', 'pretty']).logFormat).toBe('pretty');
    for (const argv of [['--port', 'abc'], ['--port', '70000'], ['--port', '-1'], ['--bogus'], ['extra'], ['--host', ''], ['--log-format', 'xml']]) {
      expect(() => parseServeFlags(argv), argv.join(' ')).toThrow(ServeExit);
      try {
        parseServeFlags(argv);
      } catch (err) {
        expect((err as ServeExit).exitCode).toBe(2);
      }
    }
  });
});

describe('runServe (in-process)', () => {
  it(
    'listens at once, then connects behind the listening server; flags override the file',
    async () => {
      const home = await tempDir();
      const cwd = await tempDir();
      // The file says port 1 and project config on; the flags must win.
      const configPath = await writeConfig(home, { port: 1, mcpServers: { echo: fixtureServerConfig('echo-stdio') } });
      const handle = await runServe(['--config', configPath, '--port', '0', '--no-project-config'], {
        env: {},
        home,
        cwd,
        logger: pino({ level: 'silent' }),
      });
      onTestFinished(() => handle.close());

      expect(handle.port).toBeGreaterThan(1);
      expect(handle.url).toBe(`http://127.0.0.1:${handle.port}`);
      expect((await fetch(`${handle.url}/health`)).status).toBe(200);

      await handle.started;
      expect((await fetch(`${handle.url}/ready`)).status).toBe(200);
      const { tools } = (await (await fetch(`${handle.url}/tools`)).json()) as { tools: Array<{ name: string }> };
      expect(tools.map((tool) => tool.name)).toEqual(['mcp_echo_add', 'mcp_echo_echo', 'mcp_echo_reverse']);

      await handle.close();
      await expect(fetch(`${handle.url}/health`)).rejects.toThrow();
    },
    SPAWN_TIMEOUT_MS,
  );

  it('refuses an invalid config and a missing --cwd with exit 2', async () => {
    const home = await tempDir();
    const bad = await writeConfig(home, { port: 'seven' });
    await expect(runServe(['--config', bad], { env: {}, home, cwd: home })).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/^invalid config: .*port/),
    });
    await expect(runServe(['--cwd', join(home, 'missing')], { env: {}, home, cwd: home })).rejects.toMatchObject({
      exitCode: 2,
    });
  });
});

describe('handleShutdownSignals', () => {
  it('closes once on the first signal and forces exit 1 on the second', async () => {
    const signals = new EventEmitter();
    let closes = 0;
    let finishClose!: () => void;
    const handle = {
      daemon: { logger: pino({ level: 'silent' }) } as never,
      close: () => {
        closes += 1;
        return new Promise<void>((resolve) => (finishClose = resolve));
      },
    };
    const forced: number[] = [];
    const stopped = new Promise<number>((resolve) => {
      handleShutdownSignals(handle, {
        signals: signals as never,
        onStopped: resolve,
        forceExit: (code) => forced.push(code),
      });
    });

    signals.emit('SIGTERM', 'SIGTERM');
    expect(closes).toBe(1);
    signals.emit('SIGINT', 'SIGINT');
    expect(closes).toBe(1);
    expect(forced).toEqual([1]);

    finishClose();
    expect(await stopped).toBe(0);
    expect(signals.listenerCount('SIGTERM') + signals.listenerCount('SIGINT')).toBe(0);
  });
});

describe('switchboard serve (child process)', () => {
  it(
    'answers /health at once, turns /ready, serves the tools, and exits 0 on SIGTERM',
    async () => {
      const home = await tempDir();
      const cwd = await tempDir();
      const configPath = await writeConfig(home, { mcpServers: { echo: fixtureServerConfig('echo-stdio') } });
      const serve = spawnServe(['--config', configPath, '--port', '0'], { home, cwd });

      const listening = await serve.waitForLog((entry) => typeof entry.url === 'string' && entry.msg?.startsWith('listening') === true);
      const url = listening.url as string;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(listening.msg).toBe(`listening on ${url}`);
      expect((await fetch(`${url}/health`)).status).toBe(200);

      // Piped, the log is JSON with ISO times, and the startup summary names each server.
      const ready = await serve.waitForLog((entry) => entry.msg === 'ready');
      expect(ready).toMatchObject({ tools: 3, cacheHits: 0, servers: 1, summary: [expect.objectContaining({ name: 'echo', status: 'connected', tools: 3 })] });
      expect(ready.time).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect((await fetch(`${url}/ready`)).status).toBe(200);
      const { tools } = (await (await fetch(`${url}/tools`)).json()) as { tools: Array<{ name: string; server: string }> };
      expect(tools).toEqual([
        expect.objectContaining({ name: 'mcp_echo_add', server: 'echo' }),
        expect.objectContaining({ name: 'mcp_echo_echo', server: 'echo' }),
        expect.objectContaining({ name: 'mcp_echo_reverse', server: 'echo' }),
      ]);

      serve.child.kill('SIGTERM');
      expect(await serve.exited).toEqual({ code: 0, signal: null });
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "serves /events from ws loaded on the first upgrade (the bundle's stand-in): hello on each socket, 1001 at SIGTERM",
    async () => {
      const home = await tempDir();
      const configPath = await writeConfig(home, {});
      const serve = spawnServe(['--config', configPath, '--port', '0'], { home, cwd: home });
      const url = (await serve.waitForLog((entry) => typeof entry.url === 'string' && entry.msg?.startsWith('listening') === true)).url as string;
      const [first, second] = [await openEvents(url), await openEvents(url)];
      onTestFinished(() => void [first, second].forEach((ws) => ws.terminate()));
      expect((await nextEvent(first, 'hello')).type).toBe('hello');
      expect((await nextEvent(second, 'hello')).type).toBe('hello');
      serve.child.kill('SIGTERM');
      expect((await closed(second)).code).toBe(1001);
      expect(await serve.exited).toEqual({ code: 0, signal: null });
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'refuses a non-loopback host without a token: exit 2, one line, nothing bound',
    async () => {
      const home = await tempDir();
      const serve = spawnServe(['--host', '0.0.0.0', '--port', '0'], { home, cwd: home });
      expect(await serve.exited).toEqual({ code: 2, signal: null });
      expect(serve.stderr()).toMatch(/^switchboard: refusing to listen on non-loopback host "0\.0\.0\.0" without a token .*--insecure\)\n$/);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'loads CEL from its own chunk for a config with policies: a rule that does not compile is exit 2 naming it',
    async () => {
      const home = await tempDir();
      const configPath = await writeConfig(home, { policies: [{ name: 'typo', when: 'arg.sql == "x"', effect: 'deny' }] });
      const serve = spawnServe(['--config', configPath, '--port', '0'], { home, cwd: home });
      expect(await serve.exited).toEqual({ code: 2, signal: null });
      expect(serve.stderr()).toBe(`switchboard: invalid config: ${configPath}: policies.0.when: policy "typo": CEL does not compile at 1:1: Unknown variable: arg\n`);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'exits 2 with one line on a bad flag',
    async () => {
      const home = await tempDir();
      const serve = spawnServe(['--port', 'http'], { home, cwd: home });
      expect(await serve.exited).toEqual({ code: 2, signal: null });
      expect(serve.stderr()).toMatch(/^switchboard: invalid --port "http".*\n$/);
    },
    SPAWN_TIMEOUT_MS,
  );
});
