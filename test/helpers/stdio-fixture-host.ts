import { existsSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { ServerConfig } from '../../src/config/types.js';
import type { FixtureOptions } from './fixtures.js';
import { createBigResultsServer } from '../fixtures/servers/lib/big-results-server.js';
import { createEchoServer } from '../fixtures/servers/lib/echo-server.js';
import { serveEraStdio } from '../fixtures/servers/lib/era-stdio.js';
import { createListChangedServer } from '../fixtures/servers/lib/list-changed-server.js';
import { nativeTasks } from '../fixtures/servers/lib/native-tasks-server.js';
import { createPaginatedServer } from '../fixtures/servers/lib/paginated-server.js';
import { createPinningServer } from '../fixtures/servers/lib/pinning-server.js';
import { createPolicyTargetServer } from '../fixtures/servers/lib/policy-target-server.js';
import { serveRichStdio } from '../fixtures/servers/lib/rich-stdio.js';
import { createSlowToolServer } from '../fixtures/servers/lib/slow-tool-server.js';
import { createTraceServer } from '../fixtures/servers/lib/trace-meta-app.js';
import { serveStdio, whenGone } from '../fixtures/servers/lib/stdio.js';
import { createTaskToolsServer } from '../fixtures/servers/lib/task-tools-server.js';

/**
 * Stdio fixtures served from inside the test worker. A fixture process costs ~0.22 s of CPU before
 * it answers (Node's start, then the SDK and zod building their schemas), and the suite starts
 * hundreds; the worker has the SDK loaded already. So for a fixture whose behaviour needs no
 * process of its own, the daemon spawns `socat STDIO UNIX-CONNECT:<socket>` instead of `node
 * <bundle>`: still a real child speaking newline-delimited JSON-RPC on its stdin and stdout, which
 * the daemon spawns, supervises, signals and reaps as any stdio server, but its other end is a
 * Unix socket this worker listens on, where the fixture's own server code answers through the
 * SDK's StdioServerTransport, one server per connection, as one per process. socat starts in a
 * few ms. Its exit ends the connection, and the end of the daemon's stdin ends socat, as EOF ends
 * a fixture process.
 *
 * Not hosted (a `node` process as before): a fixture not listed here, one given `args`, `process:
 * true`, or an env key that asks for process behaviour (a pid file, stderr at start, grandchildren,
 * ignoring SIGTERM or EOF, held starts: lib/startup.ts and lib/stdio.ts). Each connection gets
 * its own server and state, made from the config's env, as each process did. Without socat on
 * PATH nothing is hosted.
 */
type Serve = (env: Record<string, string>, transport: StdioServerTransport, ended: AbortSignal) => Promise<unknown>;

/** The fixtures served here: each serves one connection's server on `transport`. */
const HOSTED: Record<string, Serve> = {
  'echo-stdio': (_env, transport) => serveStdio(createEchoServer('echo-stdio'), { transport }),
  'slow-initialize': (env, transport) => serveStdio(createEchoServer('slow-initialize'), { transport, initializeDelayMs: Number(env.INIT_DELAY_MS ?? 1000) }),
  'slow-tool': (env, transport) => serveStdio(createSlowToolServer(env), { transport }),
  'rich-stdio': (env, transport) => serveRichStdio(env, transport),
  pinning: (env, transport) => serveStdio(createPinningServer(env), { transport }),
  'policy-target': (_env, transport) => serveStdio(createPolicyTargetServer(), { transport }),
  'list-changed': (_env, transport) => serveStdio(createListChangedServer(), { transport }),
  'era-stdio': (env, transport) => serveEraStdio(env, transport),
  'big-results': (_env, transport) => serveStdio(createBigResultsServer(), { transport }),
  paginated: (env, transport) => serveStdio(createPaginatedServer(env), { transport }),
  // Its stdio mode: no HTTP header to report (`--http`, an args config, stays a process).
  'trace-meta': (_env, transport) => serveStdio(createTraceServer({ lastCallHeader: null }), { transport }),
  // A cancelled slow_compute's stderr line has no stderr here to go to (no test reads it).
  'task-tools': (env, transport) => serveStdio(createTaskToolsServer(env), { transport }),
  // Its stdio mode (`--http` has args: a process). Tasks of its own per connection, as per process,
  // and they end with the connection as with the process: no timer or file watch left in the worker.
  'native-tasks': (env, transport, ended) => {
    const tasks = nativeTasks(env);
    ended.addEventListener('abort', tasks.end, { once: true });
    return serveStdio(tasks.createServer(), { transport });
  },
};

/**
 * lib/startup.ts and lib/stdio.ts: behaviour of the process itself. HOLD_INITIALIZE_WHILE is not:
 * a hosted connection holds it here (holdInput).
 */
const PROCESS_ENV = /^(PID_FILE|SPAWN_GRANDCHILD|SPAWN_SETSID_GRANDCHILD|SPAWN_LOG|STDERR_AT_START|IGNORE_STDIN_EOF|IGNORE_SIGTERM|HOLD_START_WHILE)$/;

/** socat on PATH, if any. */
export const SOCAT = (process.env.PATH ?? '')
  .split(delimiter)
  .map((dir) => join(dir, 'socat'))
  .find((path) => existsSync(path));

/** One listening socket per fixture and env, kept for the worker's life: a daemon restarts servers. */
const sockets = new Map<string, string>();
const servers: Server[] = [];
let connections = 0;

/** How many connections the hosted fixtures have served in this worker (one per server start). */
export function hostedConnections(): number {
  return connections;
}

/** The ServerConfig that runs fixture `name` hosted in this worker, or undefined where it needs a process. */
export function hostedStdioConfig(name: string, options: Pick<FixtureOptions, 'env' | 'args' | 'process'>): ServerConfig | undefined {
  const fixture = HOSTED[name];
  const env = options.env ?? {};
  if (SOCAT === undefined || fixture === undefined || options.process || options.args?.length) return undefined;
  if (Object.keys(env).some((key) => PROCESS_ENV.test(key))) return undefined;
  const key = `${name} ${JSON.stringify(env)}`;
  let path = sockets.get(key);
  if (path === undefined) {
    path = join(tmpdir(), `switchboard-fixture-${process.pid}-${sockets.size}.sock`);
    listen(path, fixture, env);
    sockets.set(key, path);
  }
  // The env still goes to the daemon: tests check how it treats a server's env (e.g. never logging it).
  return { command: SOCAT, args: ['STDIO', `UNIX-CONNECT:${path}`], ...(options.env ? { env: options.env } : {}) };
}

function listen(path: string, serve: Serve, env: Record<string, string>): void {
  if (existsSync(path)) unlinkSync(path);
  const server = createServer((socket) => {
    // socat killed mid-write resets the connection: as a fixture whose client died, nothing to do.
    socket.on('error', () => {});
    connections += 1;
    const ended = new AbortController();
    socket.once('close', () => ended.abort());
    const transport = new StdioServerTransport(socket, socket);
    if (env.HOLD_INITIALIZE_WHILE) holdInput(socket, env.HOLD_INITIALIZE_WHILE, ended.signal);
    // What the server still sends once socat is gone goes nowhere, as a fixture process's writes
    // after its client left: not a rejection (a fixture's `void notify(…)` would make it an
    // unhandled one, which fails the worker's test where it would only end the fixture's process).
    const send = transport.send.bind(transport);
    transport.send = (message) =>
      send(message).catch((error: unknown) => {
        if (socket.writable) throw error;
      });
    void serve(env, transport, ended.signal).catch(() => socket.destroy());
  });
  // Bound and listening when listen() returns (a pipe binds synchronously), so a daemon started
  // right after finds it. Unref'd: the sockets never keep a worker alive.
  server.listen(path);
  server.unref();
  servers.push(server);
  if (servers.length === 1) process.once('exit', closeAll);
}

/**
 * HOLD_INITIALIZE_WHILE=<file> (test/helpers/hold-initialize.ts) for a hosted connection: its input
 * is not read while the file exists. A client's first message is its `initialize`, and it sends
 * nothing before the answer, so this holds `initialize` as a fixture process does (lib/stdio.ts).
 * Paused before the transport listens: a 'data' listener does not resume an explicit pause.
 */
function holdInput(socket: Socket, file: string, ended: AbortSignal): void {
  if (!existsSync(file)) return;
  socket.pause();
  whenGone(
    file,
    () => {
      if (!socket.destroyed) socket.resume();
    },
    ended,
  );
}

function closeAll(): void {
  for (const server of servers) server.close();
  for (const path of sockets.values()) {
    try {
      unlinkSync(path);
    } catch {
      // Gone already.
    }
  }
}
