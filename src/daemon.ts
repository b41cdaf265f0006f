import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { discoverMCPServers } from './config/discover.js';
import { defaultDbPath } from './config/load.js';
import { createValueResolver } from './config/resolve-values.js';
import type { DaemonConfig } from './config/schema.js';
import type { DiscoveryResult } from './config/types.js';
import { buildApp } from './http/app.js';
import { RequestDrain } from './http/lifecycle/drain.js';
import { EventHub } from './http/ws/event-hub.js';
import { keepChildRecords } from './mcp/process/child-registry.js';
import { connectToServer } from './mcp/transport/client.js';
import { reapLeftovers } from './mcp/process/leftover-reaper.js';
import { loadInstanceId } from './mcp/upstream/instance.js';
import { forwardServerLogs } from './mcp/process/log-forwarding.js';
import { MCPManager, type HealthOptions } from './mcp/manager.js';
import { callbackUrlOf, OAuthBroker } from './mcp/oauth/broker.js';
import { MemoryStateStore } from './store/state-store.js';
import { createLogger } from './logger.js';
import { SwitchboardRuntime } from './runtime/runtime.js';
import { openMemoryOAuthStore, openToolCache, type OpenedStores } from './store/open-tool-cache.js';
import type { ToolCacheStore } from './store/ports.js';
import { systemClock, type Clock } from './util/clock.js';

export interface DaemonDeps {
  logger?: Logger;
  /** @default the SQLite cache at `config.dbPath` */
  store?: ToolCacheStore;
  /** @default process.cwd() */
  cwd?: string;
  /** @default os.homedir() */
  home?: string;
  /** @default process.env */
  env?: NodeJS.ProcessEnv;
  /** The file discovery reads as Switchboard's own config (the `--config` path). */
  configPath?: string;
  /** Replaces discovery (tests and embedders with a fixed server set). */
  discover?: () => Promise<DiscoveryResult>;
  /** @default connectToServer */
  connect?: typeof connectToServer;
  /** Time of the supervision and of OAuth token expiry; tests about timing inject a manual one. @default the system clock */
  clock?: Clock;
}

export interface Daemon {
  app: FastifyInstance;
  manager: MCPManager;
  runtime: SwitchboardRuntime;
  store: ToolCacheStore;
  events: EventHub;
  /** OAuth sign-in to upstreams, and the credentials an embedder stores per server (SPEC §3). */
  oauth: OAuthBroker;
  logger: Logger;
  /** Starts discovery + connect behind the already-built app; resolves at the startup gate. */
  start(): Promise<unknown>;
  /**
   * Drains like a server that is still alive: keeps listening while in-flight calls finish
   * within `shutdownGraceMs` (`/health` answers 200, every other route 503 `SHUTTING_DOWN` with
   * `Connection: close`), cancels the rest, then closes the listener, disconnects every server
   * and closes the database. Idempotent and joinable.
   */
  close(): Promise<void>;
}

/** `health: true | false | {…}` of the config file → the manager's health options. */
function healthOptions(health: DaemonConfig['health']): HealthOptions {
  if (typeof health === 'boolean') return { enabled: health };
  return { enabled: health.enabled, pingIntervalMs: health.pingIntervalMs, pingTimeoutMs: health.pingTimeoutMs };
}

/** The port the app listens on once `listen` resolved; none before (embedded, not listening). */
/**
 * The port the daemon listens on: the bound one once `listen` resolved, else the configured one
 * (discovery starts while the listener binds). With port 0 and no bind yet there is none — and no
 * config file can name a port chosen at random anyway.
 */
function listeningPorts(app: FastifyInstance, configured: number): number[] {
  const address = app.server.address();
  if (typeof address === 'object' && address !== null) return [address.port];
  return configured > 0 ? [configured] : [];
}

/** An embedder's own tool cache: the state and the sign-ins then last as long as this process. */
function besideOwnCache(store: ToolCacheStore): OpenedStores {
  const oauth = openMemoryOAuthStore();
  return { store, state: new MemoryStateStore(), oauth, credentials: oauth.credentials, warnings: [] };
}

/** How long calls cancelled at the end of the shutdown grace get to send their 503. */
const ABORTED_ANSWER_MS = 250;

/** Builds the whole daemon without listening or connecting anything. */
export function createDaemon(config: DaemonConfig, deps: DaemonDeps = {}): Daemon {
  const env = deps.env ?? process.env;
  const home = deps.home ?? homedir();
  const cwd = deps.cwd ?? process.cwd();
  const logger = deps.logger ?? createLogger({ level: config.logLevel });
  const dbPath = config.dbPath ?? defaultDbPath(home, env);
  const clock = deps.clock ?? systemClock;
  const cache = deps.store ? besideOwnCache(deps.store) : openToolCache(dbPath, { logger: logger.child({ component: 'store' }) });
  for (const warning of cache.warnings) logger.warn({ component: 'store' }, warning);
  /** This daemon's instance id (SPEC §11); see `identity` and `start`. */
  let instanceId: string | undefined;
  const store = cache.store;
  const oauth = new OAuthBroker({
    store: cache.oauth,
    credentials: cache.credentials,
    clock,
    log: logger.child({ component: 'oauth' }),
    callbackUrl: () => callbackUrlOf(app.server.address()),
  });

  const resolver = createValueResolver({
    trustProjectCommands: config.trustProjectCommands,
    logger: logger.child({ component: 'values' }),
    // SPEC §3's stored credentials, in the same store as the OAuth sign-ins.
    credentials: { injectCredentials: (name) => oauth.storedCredential(name) },
  });
  const manager = new MCPManager({
    logger,
    store,
    startupGateMs: config.startupGateMs,
    // stderr lines and MCP log messages become `server.log` events (`switchboard logs --follow`).
    connect: forwardServerLogs(deps.connect ?? connectToServer, (event) => manager.emitOperation(event)),
    env,
    health: healthOptions(config.health),
    protocol: config.protocol,
    clock,
    oauth,
    // Asked for at the first connect, after the listener is up (the label names the bound port).
    // The id is read from the state store in start(), before anything connects; asked for
    // earlier (an embedder that never starts), the daemon is a fresh instance.
    identity: () => {
      const port = listeningPorts(app, config.port)[0];
      const label = port === undefined ? 'switchboard' : `${isIP(config.host) === 6 ? `[${config.host}]` : config.host}:${port}`;
      return { id: (instanceId ??= randomUUID()), label };
    },
    resolveValues: async (name, serverConfig, source) => {
      const { config: resolved, warnings } = await resolver.resolve(name, serverConfig, source);
      for (const warning of warnings) logger.warn({ server: name }, warning);
      return resolved;
    },
    connectOptions: { roots: config.roots ?? [cwd], inheritEnv: config.inheritEnv },
  });
  const discover =
    deps.discover ??
    (() =>
      discoverMCPServers({
        cwd,
        home,
        env,
        ...(deps.configPath ? { configPath: deps.configPath } : {}),
        enableProjectConfig: config.enableProjectConfig,
        selfPorts: listeningPorts(app, config.port),
      }));
  const runtime = new SwitchboardRuntime({
    manager,
    discover,
    logger,
    storeWarnings: cache.warnings,
    watchConfig: config.watch,
  });
  const events = new EventHub({ manager, runtime });
  const shutdown = new AbortController();
  const drain = new RequestDrain();
  const app = buildApp({ config, manager, runtime, events, oauth, logger, shutdownSignal: shutdown.signal, drain });

  // Stdio children are recorded beside the database, and what a killed daemon left there is
  // reaped at start (SPEC §6 "No orphans, ever"). Reaped before recording our own, and reaping
  // runs on while the servers connect: it only ever kills what it verified is a leftover.
  const stateDir = dbPath === ':memory:' ? undefined : dirname(dbPath);
  let children: { reaped: Promise<unknown>; release: () => void } | undefined;
  const start = async (): Promise<unknown> => {
    if (stateDir !== undefined && !children) {
      const log = logger.child({ component: 'children' });
      children = { reaped: reapLeftovers({ stateDir, logger: log }), release: keepChildRecords(stateDir, log) };
    }
    // Kept per configured port (SPEC §11): the same daemon keeps its place in any loop it is part of.
    if (instanceId === undefined) {
      const loaded = await loadInstanceId(cache.state, config.port > 0 ? config.port : undefined);
      instanceId ??= loaded;
    }
    return runtime.start();
  };

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      // From here every route but /health answers 503 SHUTTING_DOWN with Connection: close.
      runtime.stopAccepting();
      try {
        events.close();
        // Still listening: in-flight calls finish within the grace, then the rest are cancelled
        // (503) and get a moment to say so. Only then does the listener close.
        if (!(await drain.settle(config.shutdownGraceMs))) {
          shutdown.abort(new Error('shutdown grace period elapsed'));
          await drain.settle(ABORTED_ANSWER_MS);
        }
        const closed = app.close();
        // A request that did not end even when aborted must not hold the shutdown open.
        if (drain.active > 0) app.server.closeAllConnections();
        await closed;
      } finally {
        shutdown.abort(new Error('shutting down'));
        await runtime.close();
        events.stop();
        await store.close();
        await children?.reaped;
        children?.release();
        await cache.oauth.close();
      }
    })();
    return closing;
  };

  return { app, manager, runtime, store, events, oauth, logger, start, close };
}
