import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACCEPT_POLL_MS, accepts } from './accepts.js';
import { freePort } from './free-port.js';
import type { Cleanup } from './process.js';

/**
 * A real nginx (Debian's `nginx` package, `/usr/sbin/nginx`) in front of daemons, for the replica
 * tests and benchmark B11 (issue #28): a child process in the foreground (`daemon off;`) with its
 * own prefix directory (config, pid, logs, temp paths), listening on a random loopback port.
 * `.ci/run` installs the package when it is missing; nothing here starts the system service.
 *
 * The proxy settings are the ones deploy/compose/nginx.conf ships, minus the container names:
 * streaming-friendly (no buffering, HTTP/1.1 with upstream keep-alive, long read timeout,
 * WebSocket upgrade) and with passive failover (`max_fails` / `fail_timeout`, `proxy_next_upstream`).
 */

export const NGINX_BIN = process.env.NGINX_BIN ?? '/usr/sbin/nginx';

export interface NginxOptions {
  /** `127.0.0.1:port` of each replica, in order. */
  upstreams: readonly string[];
  /**
   * Route requests carrying `Mcp-Session-Id` by a consistent hash of it, so a 2025-era session
   * stays on the replica that made it. Requests without the header (REST, 2026-07-28 `/mcp`, an
   * `initialize`) have an empty key, and nginx sends those round-robin.
   * @default false (round-robin for every request)
   */
  sticky?: boolean;
  /** Failed attempts within `failTimeoutS` before a replica is left out for `failTimeoutS`. @default 1 */
  maxFails?: number;
  /** @default 10 */
  failTimeoutS?: number;
  /**
   * Idle keep-alive connections nginx keeps to the replicas (per worker); 0 for none (a TCP connect
   * per request: B17 prices it, B15 found it does not spare the 502s at a replica kill).
   * @default 32 (as deploy/compose/nginx.conf)
   */
  keepalive?: number;
  /** @default 1 */
  workerProcesses?: number;
  /** Register `stop()` here (e.g. vitest's `onTestFinished`). @default none: the caller stops it */
  cleanup?: Cleanup;
}

export interface Nginx {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  port: number;
  /** The master process; its workers are its children. */
  pid: number;
  /**
   * The access log so far, one entry per request: method, path, status, the upstream(s) tried
   * (`$upstream_addr`, comma-separated after a failover) and the `Mcp-Session-Id` sent.
   */
  accessLog(): Promise<AccessEntry[]>;
  /** The error log so far (warnings and up), for a failing test's message. */
  errorLog(): Promise<string>;
  /**
   * SIGTERM (nginx's fast shutdown), SIGKILL after 5 s; removes the prefix directory. Idempotent.
   * Not SIGQUIT: a graceful quit waits for every client connection nginx does not count as idle,
   * and one left open by the test process's fetch pool held it until undici's 4 s keep-alive
   * timeout closed it (half the runs of replicas-nginx.test.ts). Whoever stops nginx has read
   * what it needed from it.
   */
  stop(): Promise<void>;
}

export interface AccessEntry {
  method: string;
  path: string;
  status: number;
  upstream: string;
  sessionId: string;
  /** When nginx finished the request (epoch ms, ms resolution). */
  endedAtMs: number;
  /** How long nginx had it, from its first byte read (ms resolution). */
  durationMs: number;
}

/** The nginx.conf for `options`, listening on `127.0.0.1:port`, with every path under `prefix`. */
export function nginxConfig(options: NginxOptions & { port: number; prefix: string }): string {
  const { prefix } = options;
  const maxFails = options.maxFails ?? 1;
  const failTimeout = options.failTimeoutS ?? 10;
  const servers = options.upstreams.map((address) => `    server ${address} max_fails=${maxFails} fail_timeout=${failTimeout}s;`);
  const local = localDirectives(prefix);
  return `${local.main}worker_processes ${options.workerProcesses ?? 1};
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 1024; }
http {
${local.http}
  # WebSocket upgrade for /events; an empty Connection header otherwise, so upstream keep-alive works.
  map $http_upgrade $connection_upgrade {
    default upgrade;
    '' '';
  }

  upstream switchboard {
${options.sticky ? '    hash $http_mcp_session_id consistent;\n' : ''}${servers.join('\n')}
${(options.keepalive ?? 32) > 0 ? `    keepalive ${options.keepalive ?? 32};\n` : ''}  }

  server {
    listen 127.0.0.1:${options.port};
    location / {
      proxy_pass http://switchboard;
      proxy_http_version 1.1;
      proxy_set_header Host $host;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 3600s;
      proxy_send_timeout 3600s;
      proxy_connect_timeout 2s;
      proxy_next_upstream error timeout http_502 http_503;
      proxy_next_upstream_tries 3;
    }
  }
}
`;
}

/**
 * What any config needs to run from a temp prefix: the main-context `user` line (master and
 * workers both root when we are root, as in CI: the prefix is a 0700 temp dir that `nobody`, the
 * default worker user, could not enter) and the http-context temp paths inside the prefix (the
 * package's defaults under /var/lib/nginx are root's), with the access log `accessLog()` reads.
 */
export function localDirectives(prefix: string): { main: string; http: string } {
  return {
    main: process.getuid?.() === 0 ? 'user root;\n' : '',
    http: [
      "log_format replica '$request_method\\t$uri\\t$status\\t$upstream_addr\\t$http_mcp_session_id\\t$msec\\t$request_time';",
      `access_log ${prefix}/access.log replica;`,
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `${kind}_temp_path ${prefix}/${kind};`),
    ]
      .map((line) => `  ${line}\n`)
      .join(''),
  };
}

export async function startNginx(options: NginxOptions): Promise<Nginx> {
  if (options.upstreams.length === 0) throw new Error('startNginx: no upstreams');
  return runNginx((port, prefix) => nginxConfig({ ...options, port, prefix }), options.cleanup);
}

/**
 * Runs nginx on the config `configFor(port, prefix)` returns — for a config of our own, such as
 * deploy/compose/nginx.conf with its addresses made local. It must listen on `127.0.0.1:port`
 * and write its pid to `<prefix>/nginx.pid`; the error log goes to `<prefix>/error.log`.
 */
export async function runNginx(configFor: (port: number, prefix: string) => string, cleanup?: Cleanup): Promise<Nginx> {
  if (!existsSync(NGINX_BIN)) throw new Error(`nginx is not installed at ${NGINX_BIN}: \`apt-get install -y nginx\` (the replica tests start their own)`);
  const prefix = await mkdtemp(join(tmpdir(), 'sb-nginx-'));
  // freePort() releases the port before nginx binds it; another listener may take it first.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const configPath = join(prefix, 'nginx.conf');
    await writeFile(configPath, configFor(port, prefix));
    const child = spawn(NGINX_BIN, ['-p', prefix, '-c', configPath, '-e', join(prefix, 'error.log'), '-g', 'daemon off;'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const started = await waitForListening(child, join(prefix, 'nginx.pid'), port);
    if (!started) {
      await exited;
      const log = await readFile(join(prefix, 'error.log'), 'utf8').catch(() => '');
      if (attempt < 3 && /Address already in use/.test(log + stderr)) continue;
      await rm(prefix, { recursive: true, force: true });
      throw new Error(`nginx exited (${child.exitCode ?? child.signalCode}) before listening:\n${stderr}\n${log}`);
    }
    const nginx = handle(child, exited, prefix, port);
    cleanup?.(nginx.stop);
    return nginx;
  }
}

function handle(child: ChildProcess, exited: Promise<void>, prefix: string, port: number): Nginx {
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      await rm(prefix, { recursive: true, force: true });
    })());
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    pid: child.pid as number,
    stop,
    errorLog: () => readFile(join(prefix, 'error.log'), 'utf8').catch(() => ''),
    accessLog: async () => {
      const text = await readFile(join(prefix, 'access.log'), 'utf8').catch(() => '');
      return text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => {
          const [method = '', path = '', status = '0', upstream = '', sessionId = '', msec = '0', requestTime = '0'] = line.split('\t');
          return { method, path, status: Number(status), upstream, sessionId, endedAtMs: Number(msec) * 1000, durationMs: Number(requestTime) * 1000 };
        });
    },
  };
}

/**
 * Resolves true once nginx wrote its pid file — it does so after binding its listening sockets —
 * and accepts a connection; false when it exits first (a port taken meanwhile) or after 10 s.
 */
async function waitForListening(child: ChildProcess, pidFile: string, port: number): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) return false;
    if (existsSync(pidFile) && (await accepts(port))) return true;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      return false;
    }
    await new Promise((resolve) => setTimeout(resolve, ACCEPT_POLL_MS));
  }
}
