import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { loadDaemonConfig, resolveConfigPath } from '../config/load.js';
import { createDaemon, type Daemon, type DaemonDeps } from '../daemon.js';
import { errorMessage, isSwitchboardError } from '../errors.js';
import { isLoopbackHost } from '../util/loopback.js';
import { createLogger, resolveLogFormat } from '../logger.js';
import type { CliContext, Output } from './context.js';
import { renderHelp, usageOf } from './help.js';
import { bindRefusal, parseServeFlags, ServeExit } from './serve-flags.js';
import { handleShutdownSignals, holdEarlySignals, type ShutdownWiring } from './shutdown-signals.js';
import { describeListenFailure, urlHost } from './listen-failure.js';
import { logNoServers, trackStartup } from './startup-summary.js';
import { releaseLeanStart } from './lean-start.js';
import { PACKAGE_VERSION } from '../http/package-info.js';
import { startTelemetry } from '../telemetry/start-telemetry.js';
import { prepareCluster } from '../cluster/join-cluster.js';
import { maskDatabaseUrl, openStores, StoreUnavailableError, type OpenedStores } from '../store/open-stores.js';

export const SERVE_USAGE = usageOf('serve');

export interface ServeIo {
  /** @default process.env */
  env?: NodeJS.ProcessEnv;
  /** @default os.homedir() */
  home?: string;
  /** Base for a relative `--cwd` or `--config`, and the default `--cwd`. @default process.cwd() */
  cwd?: string;
  /** @default a pino logger at the config's `logLevel` on stdout, in `--log-format` */
  logger?: Logger;
  /** Whether stdout is a terminal, for `--log-format auto`. @default process.stdout.isTTY */
  isTTY?: boolean;
  /** Further daemon edges for embedders and tests (a fixed `discover`, a `store`, …). */
  deps?: Omit<DaemonDeps, 'cwd' | 'home' | 'env' | 'configPath' | 'logger'>;
  /** Asks whoever holds a taken port whether it is a Switchboard. @default globalThis.fetch */
  probeFetch?: typeof fetch;
}

export interface ServeHandle {
  daemon: Daemon;
  /** The address actually bound (the real port when `--port 0`). */
  host: string;
  port: number;
  url: string;
  /** Resolves when the startup gate has resolved; never rejects. */
  started: Promise<void>;
  /** `daemon.close()`: drains in-flight calls, disconnects every server, closes the db. Joinable. */
  close(): Promise<void>;
}

/**
 * `switchboard serve` without the process wiring: loads the config (flags win), builds the
 * daemon, binds its port, and only then starts discovery + connect behind it (`/health` answers
 * meanwhile). A port that is taken ends it before any server is spawned.
 * Refusals and failures throw `ServeExit`; `--help` throws `ServeExit(0, usage)`.
 */
export async function runServe(argv: string[], io: ServeIo = {}): Promise<ServeHandle> {
  const flags = parseServeFlags(argv);
  if (flags.help) throw new ServeExit(0, renderHelp('serve').trimEnd());
  const env = io.env ?? process.env;
  const home = io.home ?? homedir();
  const base = io.cwd ?? process.cwd();
  const cwd = resolve(base, flags.cwd ?? '.');
  if (!isDirectory(cwd)) throw new ServeExit(2, `invalid --cwd "${flags.cwd}": not a directory`);
  const configPath = flags.config === undefined ? undefined : resolve(base, flags.config);

  let loaded: Awaited<ReturnType<typeof loadDaemonConfig>>;
  try {
    loaded = await loadDaemonConfig({ ...(configPath ? { path: configPath } : {}), env, home, cwd: base });
  } catch (err) {
    if (isSwitchboardError(err, 'CONFIG_INVALID')) throw new ServeExit(2, `invalid config: ${err.message}`, { cause: err });
    throw err;
  }
  const config = Object.freeze({
    ...loaded,
    ...(flags.host !== undefined ? { host: flags.host } : {}),
    ...(flags.port !== undefined ? { port: flags.port } : {}),
    ...(flags.noProjectConfig ? { enableProjectConfig: false } : {}),
  });

  const refusal = bindRefusal({ host: config.host, token: config.token, insecure: flags.insecure });
  if (refusal) throw new ServeExit(2, refusal);

  const isTTY = io.isTTY ?? process.stdout.isTTY === true;
  const format = resolveLogFormat(flags.logFormat, { isTTY });
  const logger = io.logger ?? createLogger({ level: config.logLevel, format, colors: format === 'pretty' && isTTY && !env.NO_COLOR });
  // The stores before anything else runs: a PostgreSQL store that cannot be reached, or holds a
  // newer schema, ends the start here — nothing listens, nothing is spawned. (An embedder's own
  // store or stores win.)
  const stores = io.deps?.store || io.deps?.stores ? undefined : await openServeStores(config, logger);
  // Before the daemon, so the first request is traced; nothing of the SDK loads unless asked for.
  const telemetry = await startTelemetry(config.telemetry, env, PACKAGE_VERSION, logger);
  // Every daemon on one PostgreSQL database is a replica of one cluster (issue #28).
  const cluster =
    stores?.backend === 'postgres' && stores.pool && config.store
      ? await prepareCluster({ connectionString: config.store, pool: stores.pool, state: stores.state }, { token: config.token })
      : undefined;
  const daemon = createDaemon(config, {
    ...io.deps,
    ...(stores ? { stores } : {}),
    ...(cluster ? { cluster } : {}),
    ...(telemetry ? { telemetry: telemetry.telemetry } : {}),
    cwd,
    home,
    env,
    ...(configPath ? { configPath } : {}),
    logger,
  });
  const log = daemon.logger;
  // Parts of the config left out (an invalid agent entry); the rest applies.
  for (const warning of loaded.warnings) log.warn({ component: 'config' }, warning);
  if (!isLoopbackHost(config.host) && !config.token) {
    log.warn({ host: config.host }, 'listening on a non-loopback host without a token (--insecure)');
  }

  // The port first, then everything else: while another process holds it, no server may be
  // spawned (nor a predecessor's leftovers reaped) only to be torn down again.
  try {
    await daemon.app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await daemon.close().catch(() => undefined);
    await telemetry?.shutdown();
    throw new ServeExit(1, await describeListenFailure(err, config.host, config.port, io.probeFetch), { cause: err });
  }
  const address = daemon.app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const url = `http://${urlHost(config.host)}:${port}`;
  log.info({ url, host: config.host, port }, `listening on ${url}`);

  const startup = trackStartup(daemon);
  const started = daemon
    .start()
    .then(
      () => {
        const { servers, ...totals } = startup.summary();
        log.info({ mcp: `${url}/mcp`, ...totals, servers: servers.length, summary: servers }, 'ready');
        if (servers.length === 0) logNoServers(daemon, resolveConfigPath({ ...(configPath ? { path: configPath } : {}), env, home, cwd: base }).path);
      },
      // start() reports per-server failures itself; this only keeps a bug from becoming an
      // unhandled rejection that takes every other server down with it.
      (err: unknown) => log.error({ err: errorMessage(err) }, 'startup failed'),
    )
    .finally(releaseLeanStart);

  // Telemetry is flushed last: the spans of the requests the drain let finish are exported too.
  const close = (): Promise<void> => daemon.close().finally(() => telemetry?.shutdown());
  return { daemon, host: config.host, port, url, started, close };
}

export interface ServeCommandIo extends ServeIo, Omit<ShutdownWiring, 'onStopped'> {
  /** @default process.stdout */
  stdout?: Output;
  /** @default process.stderr */
  stderr?: Output;
}

/**
 * The `serve` command: runs until SIGTERM/SIGINT/SIGHUP and resolves with the exit code (0 after a
 * clean shutdown, 1 when it failed, 2 for a refused start). The caller exits with it.
 */
export async function serveCommand(argv: string[], io: ServeCommandIo = {}): Promise<number> {
  let handle: ServeHandle;
  const held = holdEarlySignals(io.signals);
  try {
    handle = await runServe(argv, io);
  } catch (err) {
    held.release();
    if (err instanceof ServeExit && err.exitCode === 0) {
      (io.stdout ?? process.stdout).write(`${err.message}\n`);
      return 0;
    }
    const code = err instanceof ServeExit ? err.exitCode : 1;
    (io.stderr ?? process.stderr).write(`switchboard: ${errorMessage(err)}\n`);
    return code;
  }
  return new Promise<number>((done) => {
    handleShutdownSignals(
      handle,
      {
        ...(io.signals ? { signals: io.signals } : {}),
        ...(io.forceExit ? { forceExit: io.forceExit } : {}),
        onStopped: done,
      },
      held,
    );
  });
}

/** How long a stopped daemon may take to end on its own before the process is ended for it. */
const EXIT_FAILSAFE_MS = 2_000;

/** `serve` for the dispatcher (`switchboard serve …`). */
export async function runServeCli(ctx: CliContext): Promise<number> {
  const code = await serveCommand(ctx.argv, ctx);
  // close() has released everything, so the process ends on its own; should a handle outlive it
  // (a bug), a daemon that does not exit after SIGTERM is worse than an abrupt exit. Unref'd, this
  // timer fires only in that case.
  setTimeout(() => process.exit(code), EXIT_FAILSAFE_MS).unref();
  return code;
}

/**
 * The daemon's stores, as the config says: PostgreSQL with `store` (or SWITCHBOARD_DATABASE_URL),
 * else the SQLite file at `dbPath`. A PostgreSQL store that cannot be used ends the start (exit 1).
 */
async function openServeStores(config: { store?: string | undefined; dbPath: string }, logger: Logger): Promise<OpenedStores> {
  const log = logger.child({ component: 'store' });
  try {
    const stores = await openStores({ url: config.store, dbPath: config.dbPath, logger: log });
    if (config.store) log.info({ backend: 'postgres', store: maskDatabaseUrl(config.store) }, 'using the PostgreSQL store');
    return stores;
  } catch (err) {
    if (err instanceof StoreUnavailableError) throw new ServeExit(1, err.message, { cause: err });
    throw err;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
