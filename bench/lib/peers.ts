import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ServerConfig } from '../../src/config/types.js';
import type { HttpClient } from './http.js';
import { descendantPids, isAlive, isLoopbackAddress, killGroup, listeningSockets } from './proc.js';
import { track, trackDir } from './reaper.js';
import { REPO_ROOT, type StopOutcome } from './serve.js';

/**
 * The peers Switchboard is measured against (issue #17): mcp-hub and mcp-proxy, at the exact
 * versions pinned in devDependencies, each run as a real process from node_modules the way a user
 * runs it. Every peer:
 * - runs `node --import loopback-preload.mjs <its cli>`: the preload pins every TCP listen() to
 *   127.0.0.1 and reports the port actually bound on stderr (see the preload for why);
 * - has HOME, the XDG directories and its working directory in a temp directory, removed on stop,
 *   so it reads no user config and leaves no state behind;
 * - leads its own process group (spawned detached), so `stop()` can kill it and whatever it
 *   spawned in one go; the reaper covers an interrupted bench.
 */

const PRELOAD = fileURLToPath(new URL('./loopback-preload.mjs', import.meta.url));
const LISTENING = /^switchboard-bench-listening (\S+) (\d+)$/;
/** Lines of output kept for diagnostics; a peer that logs per call must not grow the bench. */
const OUTPUT_LINES = 2000;

export type PeerName = 'mcp-hub' | 'mcp-proxy';

const BIN: Record<PeerName, string> = {
  'mcp-hub': 'node_modules/mcp-hub/dist/cli.js',
  'mcp-proxy': 'node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs',
};

/** The installed version of a peer, as its package.json says. */
export function peerVersion(name: PeerName): string {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
}

/** `mcp-hub 4.2.1`: how a peer is named in the table. */
export function peerLabel(name: PeerName): string {
  return `${name} ${peerVersion(name)}`;
}

/** A temp directory holding a peer's HOME, XDG directories and working directory. */
export interface PeerWorkspace {
  dir: string;
  home: string;
  cwd: string;
  /** XDG_DATA_HOME, XDG_STATE_HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME. */
  xdg: { data: string; state: string; config: string; cache: string };
  remove(): Promise<void>;
}

export async function createPeerWorkspace(name: PeerName): Promise<PeerWorkspace> {
  const dir = await mkdtemp(join(tmpdir(), `switchboard-bench-${name}-`));
  const untrack = trackDir(dir);
  const sub = (path: string): string => join(dir, path);
  const workspace: PeerWorkspace = {
    dir,
    home: sub('home'),
    cwd: sub('cwd'),
    xdg: { data: sub('xdg/data'), state: sub('xdg/state'), config: sub('xdg/config'), cache: sub('xdg/cache') },
    remove: () => rm(dir, { recursive: true, force: true }).then(untrack),
  };
  await Promise.all([workspace.home, workspace.cwd, ...Object.values(workspace.xdg)].map((path) => mkdir(path, { recursive: true })));
  return workspace;
}

export interface PeerProcess {
  name: PeerName;
  pid: number;
  /** `performance.now()` just before spawn. */
  spawnedAt: number;
  /** Resolves with `http://127.0.0.1:<port>` once the preload reported the bound port. */
  listening: Promise<string>;
  /** `performance.now()` when that report arrived. */
  listeningAt(): number | undefined;
  workspace: PeerWorkspace;
  /** The last lines of stdout and stderr, for diagnostics and log checks. */
  output(): readonly string[];
  /** SIGTERM, wait (SIGKILL the group after `graceMs`), kill anything left, remove the workspace. */
  stop(graceMs?: number): Promise<StopOutcome>;
}

interface SpawnPeerOptions {
  name: PeerName;
  args: string[];
  workspace: PeerWorkspace;
  /** Added to the peer's environment (after the clean-up below). */
  env?: Record<string, string>;
}

function spawnPeer(options: SpawnPeerOptions): PeerProcess {
  const { name, workspace } = options;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: workspace.home,
    XDG_DATA_HOME: workspace.xdg.data,
    XDG_STATE_HOME: workspace.xdg.state,
    XDG_CONFIG_HOME: workspace.xdg.config,
    XDG_CACHE_HOME: workspace.xdg.cache,
  };
  // Nothing from the caller's shell that a peer would act on.
  for (const key of Object.keys(env)) {
    if (key.startsWith('SWITCHBOARD_') || key === 'NODE_OPTIONS' || key === 'MCP_HUB_ENV' || key === 'MCP_PROXY_API_KEY') delete env[key];
  }
  Object.assign(env, options.env);

  const spawnedAt = performance.now();
  const child = spawn(process.execPath, ['--import', PRELOAD, join(REPO_ROOT, BIN[name]), ...options.args], {
    cwd: workspace.cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  const pid = child.pid as number;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));

  const output: string[] = [];
  const keep = (line: string): void => {
    output.push(line);
    if (output.length > OUTPUT_LINES) output.splice(0, output.length - OUTPUT_LINES);
  };
  let listeningAt: number | undefined;
  const listening = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', keep);
    createInterface({ input: child.stderr! }).on('line', (line) => {
      const match = LISTENING.exec(line);
      if (!match) return keep(line);
      listeningAt ??= performance.now();
      if (match[1] !== '127.0.0.1') reject(new Error(`${name} listened on ${match[1]}, not 127.0.0.1`));
      resolve(`http://127.0.0.1:${match[2]}`);
    });
    void exited.then(({ code, signal }) => reject(new Error(`${name} exited (${code ?? signal}) before listening:\n${output.slice(-20).join('\n')}`)));
  });
  listening.catch(() => undefined);

  const stop = async (graceMs = 10_000): Promise<StopOutcome> => {
    const descendants = descendantPids(pid);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => killGroup(pid), graceMs);
    const outcome = await exited;
    clearTimeout(timer);
    const orphans = descendants.filter(isAlive);
    // The group first (whatever the peer spawned without a group of its own), then any stragglers.
    killGroup(pid);
    for (const orphan of orphans) killGroup(orphan);
    await workspace.remove();
    return { ...outcome, orphans: orphans.length };
  };

  return { name, pid, spawnedAt, listening, listeningAt: () => listeningAt, workspace, output: () => output, stop };
}

/** Throws unless every TCP socket `peer` listens on is on a loopback address. */
export function assertLoopbackOnly(name: string, pid: number): void {
  const sockets = listeningSockets(pid);
  const exposed = sockets.filter((socket) => !isLoopbackAddress(socket.address));
  if (sockets.length === 0) throw new Error(`${name} (pid ${pid}) has no listening socket to check`);
  if (exposed.length > 0) throw new Error(`${name} listens beyond loopback: ${JSON.stringify(exposed)}`);
}

/**
 * mcp-hub, fronting `servers`: `mcp-hub --port <p> --config <tmp>/mcp-hub.json`.
 * - It refuses port 0 ("Cannot register workspace: no port specified"), so the bench picks a free
 *   loopback port and retries on the rare collision.
 * - It fetches its marketplace catalogue from the internet at startup unless its cache
 *   (`$XDG_DATA_HOME/mcp-hub/cache/registry.json`) is fresh: the workspace gets a fresh one-entry
 *   catalogue, and `mcpHubReady` fails the run if mcp-hub says it fetched anyway.
 * - Its workspace registry and logs go to `$XDG_STATE_HOME/mcp-hub`.
 * Resolves once it listens; it is ready later (see `mcpHubReady`).
 */
export async function startMcpHub(servers: Record<string, ServerConfig>): Promise<PeerProcess> {
  for (let attempt = 1; ; attempt++) {
    const workspace = await createPeerWorkspace('mcp-hub');
    const configPath = join(workspace.dir, 'mcp-hub.json');
    const now = Date.now();
    const catalogue = { version: 'switchboard-bench', generatedAt: now, totalServers: 1, servers: [{ id: 'switchboard-bench', name: 'switchboard-bench' }] };
    await mkdir(join(workspace.xdg.data, 'mcp-hub', 'cache'), { recursive: true });
    await writeFile(join(workspace.xdg.data, 'mcp-hub', 'cache', 'registry.json'), JSON.stringify({ registry: catalogue, lastFetchedAt: now, serverDocumentation: {} }));
    await writeFile(configPath, JSON.stringify({ mcpServers: servers }));
    const port = await freeLoopbackPort();
    const hub = spawnPeer({ name: 'mcp-hub', args: ['--port', String(port), '--config', configPath], workspace });
    try {
      await hub.listening;
      return hub;
    } catch (err) {
      await hub.stop();
      const collided = hub.output().some((line) => line.includes('EADDRINUSE'));
      if (!collided || attempt === 3) throw err;
    }
  }
}

export interface McpHubHealth {
  state: string;
  servers: Array<{ name: string; status: string }>;
}

/**
 * Polls `GET /api/health` until mcp-hub's state is `ready` (it gets there once every configured
 * server has connected or failed) and returns `performance.now()` at that answer. Then checks that
 * all `expectedServers` are connected and that mcp-hub did not fetch its catalogue from the
 * internet.
 */
export async function mcpHubReady(hub: PeerProcess, http: HttpClient, expectedServers: number, options: { pollMs?: number; timeoutMs?: number } = {}): Promise<number> {
  const deadline = performance.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const res = await http.get('/api/health');
    const health = res.status === 200 ? (JSON.parse(res.body.toString('utf8')) as McpHubHealth) : undefined;
    if (health?.state === 'ready') {
      const at = performance.now();
      const connected = health.servers.filter((server) => server.status === 'connected').length;
      if (connected !== expectedServers) throw new Error(`mcp-hub ready with ${connected}/${expectedServers} servers connected: ${JSON.stringify(health.servers)}`);
      const fetched = hub.output().find((line) => /marketplace registry/i.test(line));
      if (fetched) throw new Error(`mcp-hub went to the network for its marketplace catalogue: ${fetched}`);
      return at;
    }
    if (health?.state === 'error') throw new Error(`mcp-hub failed to start: ${JSON.stringify(health)}`);
    if (performance.now() > deadline) throw new Error(`mcp-hub not ready within ${options.timeoutMs ?? 60_000} ms (state ${health?.state})`);
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 5));
  }
}

/**
 * mcp-proxy fronting one stdio server: `mcp-proxy --server stream --host 127.0.0.1 --port 0 --
 * <command> <args…>`, so `/mcp` (Streamable HTTP, both protocol eras) and no `/sse`. It connects
 * to the server before it listens, so listening is ready. The server inherits mcp-proxy's whole
 * environment, so the server's `env` is set on mcp-proxy.
 */
export async function startMcpProxy(server: ServerConfig, extraArgs: string[] = []): Promise<PeerProcess> {
  if (!server.command) throw new Error('startMcpProxy fronts a stdio server: it needs a command');
  const workspace = await createPeerWorkspace('mcp-proxy');
  const args = ['--server', 'stream', '--host', '127.0.0.1', '--port', '0', ...extraArgs, '--', server.command, ...(server.args ?? [])];
  const proxy = spawnPeer({ name: 'mcp-proxy', args, workspace, ...(server.env ? { env: server.env } : {}) });
  try {
    await proxy.listening;
    return proxy;
  } catch (err) {
    await proxy.stop();
    throw err;
  }
}

/** A port that was free on 127.0.0.1 a moment ago, for a peer that cannot take port 0. */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
