import { isIP } from 'node:net';
import { homedir } from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { discoverMCPServers } from './config/discover.js';
import { defaultDbPath } from './config/load.js';
import { createValueResolver } from './config/resolve-values.js';
import type { DaemonConfig } from './config/schema.js';
import type { DiscoveryResult } from './config/types.js';
import { buildApp } from './http/app.js';
import { EventHub } from './http/ws/event-hub.js';
import { connectToServer } from './mcp/client.js';
import { loadInstanceIdentity } from './mcp/instance.js';
import { MCPManager, type HealthOptions } from './mcp/manager.js';
import { callbackUrlOf, OAuthBroker } from './mcp/oauth/broker.js';
import { MemoryStateStore } from './store/state-store.js';
import { createLogger } from './logger.js';
import { SwitchboardRuntime } from './runtime.js';
import { openMemoryOAuthStore, openToolCache } from './store/open-tool-cache.js';
import type { ToolCacheStore } from './store/tool-cache-store.js';
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
   * Stops accepting requests, lets in-flight calls finish within `shutdownGraceMs`, aborts the
   * rest, disconnects every server and closes the database. Idempotent and joinable.
   */
  close(): Promise<void>;
}

/** `health: true | false | {…}` of the config file → the manager's health options. */
function healthOptions(health: DaemonConfig['health']): HealthOptions {
  if (typeof health === 'boolean') return { enabled: health };
  return { enabled: health.enabled, pingIntervalMs: health.pingIntervalMs, pingTimeoutMs: health.pingTimeoutMs };
}

/** The port the app listens on once `listen` resolved; none before (embedded, not listening). */
function listeningPorts(app: FastifyInstance): number[] {
  const address = app.server.address();
  return typeof address === 'object' && address !== null ? [address.port] : [];
}

/** Builds the whole daemon without listening or connecting anything. */
export function createDaemon(config: DaemonConfig, deps: DaemonDeps = {}): Daemon {
  const env = deps.env ?? process.env;
  const home = deps.home ?? homedir();
  const cwd = deps.cwd ?? process.cwd();
  const logger = deps.logger ?? createLogger({ level: config.logLevel });
  const clock = deps.clock ?? systemClock;
  const cache = deps.store
    ? { store: deps.store, state: new MemoryStateStore(), oauth: openMemoryOAuthStore(), warnings: [] as string[] }
    : openToolCache(config.dbPath ?? defaultDbPath(home, env), { logger: logger.child({ component: 'store' }) });
  for (const warning of cache.warnings) logger.warn({ component: 'store' }, warning);
  const store = cache.store;
  const oauth = new OAuthBroker({
    store: cache.oauth,
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
    connect: deps.connect ?? connectToServer,
    env,
    health: healthOptions(config.health),
    protocol: config.protocol,
    clock,
    oauth,
    // Asked for at the first connect, after the listener is up: the id is kept per port.
    identity: () => {
      const port = listeningPorts(app)[0];
      const label = port === undefined ? 'switchboard' : `${isIP(config.host) === 6 ? `[${config.host}]` : config.host}:${port}`;
      return loadInstanceIdentity(cache.state, port, label);
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
        selfPorts: listeningPorts(app),
      }));
  const runtime = new SwitchboardRuntime({ manager, discover, logger, storeWarnings: cache.warnings });
  const events = new EventHub({ manager, runtime });
  const shutdown = new AbortController();
  const app = buildApp({ config, manager, runtime, events, oauth, logger, shutdownSignal: shutdown.signal });

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const grace = setTimeout(() => shutdown.abort(new Error('shutdown grace period elapsed')), config.shutdownGraceMs);
      grace.unref();
      runtime.stopAccepting();
      try {
        events.close();
        await app.close();
      } finally {
        clearTimeout(grace);
        shutdown.abort(new Error('shutting down'));
        await runtime.close();
        events.stop();
        store.close();
        cache.oauth.close();
      }
    })();
    return closing;
  };

  return { app, manager, runtime, store, events, oauth, logger, start: () => runtime.start(), close };
}
