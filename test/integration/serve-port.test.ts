import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { pino } from 'pino';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { runServe } from '../../src/cli/serve.js';
import type { DiscoveryResult } from '../../src/config/types.js';
import { discoveryOf } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir, type Cleanup } from '../helpers/process.js';
import { spawnServe } from '../helpers/serve-process.js';
import { sharedWithCleanup, startAhead } from '../helpers/shared.js';

/**
 * Issue #25 item 4: `serve` binds its port before it starts anything, says who holds a port that
 * is taken, and tells a newcomer where it looked when it found no server.
 */

/** A real daemon process plus its fixture servers: a loaded two-core box needs the time. */
const SPAWN_TIMEOUT_MS = 60_000;

/** Some other program on a port: an HTTP server that answers 404 to everything. */
async function otherProgram(cleanup: Cleanup = onTestFinished): Promise<number> {
  const server: Server = createServer((_req, res) => res.writeHead(404).end('nope'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

/** Switchboard's own config with one stdio server that writes `marker` the moment it is spawned. */
async function configWithMarker(dir: string): Promise<{ configPath: string; marker: string }> {
  const marker = join(dir, 'spawned.json');
  const configPath = join(dir, 'switchboard.json');
  const echo = fixtureServerConfig('echo-stdio', { env: { PID_FILE: marker } });
  await writeFile(configPath, JSON.stringify({ dbPath: join(dir, 'cache.db'), mcpServers: { echo } }));
  return { configPath, marker };
}

// The `serve` processes of the tests are spawned in beforeAll, all at once: one after another,
// each test's worker sat idle while node started and loaded the bundle. What each test asserts
// is read from the process's output and exit, whenever they came.
const portTaken = sharedWithCleanup(async (cleanup) => {
  const home = await tempDir(cleanup);
  const port = await otherProgram(cleanup);
  const { configPath, marker } = await configWithMarker(home);
  return { port, marker, serve: spawnServe(['--config', configPath, '--port', String(port)], { home, cwd: home }, cleanup) };
});
const firstSwitchboard = sharedWithCleanup(async (cleanup) => {
  const home = await tempDir(cleanup);
  const first = spawnServe(['--port', '0'], { home, cwd: home }, cleanup);
  return { url: await first.listening() };
});
const noServer = sharedWithCleanup(async (cleanup) => {
  const [home, cwd] = await Promise.all([tempDir(cleanup), tempDir(cleanup)]);
  return { home, cwd, serve: spawnServe(['--port', '0'], { home, cwd }, cleanup) };
});
const brokenConfig = sharedWithCleanup(async (cleanup) => {
  const home = await tempDir(cleanup);
  const cursor = join(home, '.cursor', 'mcp.json');
  await mkdir(join(home, '.cursor'));
  await writeFile(cursor, JSON.stringify({ mcpServers: { typo: { comand: 'node' } } }));
  // Not run in HOME: there ~/.cursor/mcp.json would be the project's file too, and read twice.
  return { cursor, serve: spawnServe(['--port', '0'], { home, cwd: await tempDir(cleanup) }, cleanup) };
});
beforeAll(() => startAhead(portTaken, firstSwitchboard, noServer, brokenConfig));

describe('serve: the port before any server', () => {
  it(
    'exits 1 naming the other program when the port is taken, and spawns no server',
    async () => {
      const { port, marker, serve } = await portTaken();
      expect(await serve.exited).toEqual({ code: 1, signal: null });
      expect(serve.stderr()).toBe(
        `switchboard: port ${port} on 127.0.0.1 is in use by another program: stop it, or start Switchboard with --port <other> (or "port" in its config file)\n`,
      );
      // Nothing was started: the server never ran (it writes its marker first thing), and the log
      // never mentions it.
      expect(existsSync(marker)).toBe(false);
      expect(serve.entries().filter((entry) => entry.server !== undefined)).toEqual([]);
      expect(serve.entries().filter((entry) => /listening/.test(entry.msg ?? ''))).toEqual([]);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'says so when the port is held by another Switchboard',
    async () => {
      const { url } = await firstSwitchboard();
      const port = Number(new URL(url).port);

      const other = await tempDir();
      const { configPath, marker } = await configWithMarker(other);
      const second = spawnServe(['--config', configPath, '--port', String(port)], { home: other, cwd: other });
      expect(await second.exited).toEqual({ code: 1, signal: null });
      expect(second.stderr()).toBe(
        `switchboard: port ${port} is in use by another Switchboard (${url}/health answers): one is already running — ` +
          `talk to it (switchboard status --url ${url}), stop it first, or start this one with --port <other>\n`,
      );
      expect(existsSync(marker)).toBe(false);
      // The first one is untouched.
      expect((await fetch(`${url}/health`)).status).toBe(200);
    },
    SPAWN_TIMEOUT_MS,
  );

  it('does not even discover before the port is bound (in-process)', async () => {
    const home = await tempDir();
    const port = await otherProgram();
    let discovered = 0;
    const discover = (): Promise<DiscoveryResult> => {
      discovered += 1;
      return Promise.resolve(discoveryOf({ echo: fixtureServerConfig('echo-stdio') }));
    };
    await expect(runServe(['--port', String(port)], { env: {}, home, cwd: home, logger: pino({ level: 'silent' }), deps: { discover } })).rejects.toMatchObject({
      exitCode: 1,
      message: expect.stringMatching(/in use by another program/),
    });
    expect(discovered).toBe(0);
  });
});

describe('serve: what the start says', () => {
  it(
    'logs "listening" once, the /mcp URL when ready, and where it looked when there is no server',
    async () => {
      const { home, cwd, serve } = await noServer();
      const url = await serve.listening();
      const ready = await serve.waitForLog((entry) => entry.msg === 'ready');
      expect(ready).toMatchObject({ servers: 0, mcp: `${url}/mcp` });
      const empty = await serve.waitForLog((entry) => /^no MCP servers to start in \d+ config files; add one/.test(entry.msg ?? ''));
      const configPath = join(home, '.config', 'switchboard', 'config.json');
      expect(empty).toMatchObject({ level: 40, configPath });
      expect(empty.looked).toEqual(expect.arrayContaining([configPath, join(cwd, '.mcp.json'), join(home, '.cursor', 'mcp.json')]));
      expect(empty.msg).toContain(`add one to ${configPath}, e.g. {"mcpServers": {"everything": {"command": "npx"`);
      expect(empty.msg).toContain('picked up live');

      // fastify's own "Server listening at …" is not logged beside ours.
      expect(
        serve
          .entries()
          .filter((entry) => /listening/i.test(entry.msg ?? ''))
          .map((entry) => entry.msg),
      ).toEqual([`listening on ${url}`]);
      // The bundled CLI serves prom-client's process metrics too (a CommonJS package in an ESM bundle).
      const metrics = parsePrometheusTextFormat(await (await fetch(`${url}/metrics`)).text());
      expect(metrics.map((family) => family.name)).toEqual(
        expect.arrayContaining(['switchboard_build_info', 'process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds']),
      );
      serve.child.kill('SIGTERM');
      expect((await serve.exited).code).toBe(0);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'points at the config problems it logged when everything it found is broken',
    async () => {
      const { cursor, serve } = await brokenConfig();
      const empty = await serve.waitForLog((entry) => /^no MCP servers to start/.test(entry.msg ?? ''));
      expect(empty.msg).toMatch(/^no MCP servers to start in \d+ config files \(2 config problems are logged above\); add one to /);
      // …and they are indeed above it, naming the file.
      const index = serve.entries().indexOf(empty);
      expect(
        serve
          .entries()
          .slice(0, index)
          .filter((entry) => entry.component === 'config' && entry.path === cursor),
      ).toHaveLength(2);
    },
    SPAWN_TIMEOUT_MS,
  );
});
