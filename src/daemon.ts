import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { createCluster, type ClusterSettings } from './cluster/join-cluster.js';
import { OwnerWatch } from './cluster/owner-watch.js';
import { HEARTBEAT_INTERVAL_MS } from './cluster/replica-heartbeats.js';
import { trafficTotals } from './cluster/traffic-totals.js';
import { discoverMCPServers } from './config/discover.js';
import { defaultDbPath, resolveConfigPath } from './config/load.js';
import { createValueResolver } from './config/resolve-values.js';
import type { DaemonConfig } from './config/schema.js';
import { SecretValues } from './config/secret-values.js';
import type { DiscoveryResult } from './config/types.js';
import { EventBus } from './events/event-bus.js';
import { setUpSearch } from './gateway/lists/search-setup.js';
import { AgentRegistry } from './gateway/agents/agent-registry.js';
import { operatorKeyPath } from './gateway/agents/operator-key.js';
import { Approvals } from './gateway/approvals/approvals.js';
import { AuditLog } from './gateway/audit/audit-log.js';
import { Gateway } from './gateway/gateway.js';
import { buildApp } from './http/app.js';
import { ABORTED_ANSWER_MS, RequestDrain } from './http/lifecycle/drain.js';
import { EventHub } from './http/ws/event-hub.js';
import { createLogger } from './logger.js';
import { auditDecision, besideOwnCache, healthOptions, sandboxContext, scriptSettings } from './runtime/part-options.js';
import { SwitchboardRuntime, type LoadError } from './runtime/runtime.js';
import { openToolCache } from './store/open-tool-cache.js';
import { ResultHandles } from './store/result-handles.js';
import type { OpenedStores } from './store/open-tool-cache.js';
import type { ToolCacheStore } from './store/ports.js';
import type { Telemetry } from './telemetry/telemetry.js';
import { loadInstanceId } from './upstream/instance.js';
import { MCPManager } from './upstream/manager.js';
import { callbackUrlOf, OAuthBroker, publicCallbackUrl } from './upstream/oauth/broker.js';
import { endChildWatchdog, keepChildRecords } from './upstream/process/child-registry.js';
import { reapLeftovers } from './upstream/process/leftover-reaper.js';
import { forwardServerLogs } from './upstream/transport/log-forwarding.js';
import { connectToServer, type ConnectOptions } from './upstream/transport/client.js';
import { systemClock, type Clock } from './util/clock.js';
import { advertisedUrl } from './util/replica-id.js';

/** The daemon's edges, each with the real thing as its default (STYLE rule 11). */
export interface DaemonDeps {
  /** @default a pino logger on stdout at `config.logLevel` */
  logger?: Logger;
  /** A ready tool cache; wins over `config.dbPath`, and stays the caller's to close. @default the SQLite cache at `config.dbPath` */
  store?: ToolCacheStore;
  /**
   * Every store, already opened (`openStores`: how `serve` opens PostgreSQL, which cannot be
   * opened synchronously here). The runtime takes them over and closes them. Ignored with `store`.
   * @default the SQLite stores at `config.dbPath`
   */
  stores?: OpenedStores;
  /** @default process.cwd() */
  cwd?: string;
  /** @default os.homedir() */
  home?: string;
  /** @default process.env */
  env?: NodeJS.ProcessEnv;
  /** The file discovery reads as Switchboard's own config (the `--config` path). */
  configPath?: string;
  /** Selects OS-specific config locations. @default process.platform */
  platform?: NodeJS.Platform;
  /** Replaces discovery (tests and embedders with a fixed server set). */
  discover?: () => Promise<DiscoveryResult>;
  /** @default connectToServer */
  connect?: typeof connectToServer;
  /** Time of the supervision and of OAuth token expiry; tests about timing inject a manual one. @default the system clock */
  clock?: Clock;
  /** Sent to every server in `initialize`. @default Switchboard's own */
  clientInfo?: ConnectOptions['clientInfo'];
  /** Roots for a server whose entry names none (an embedder's choice). @default none: each server keeps its own folders */
  roots?: ConnectOptions['roots'];
  /** OpenTelemetry for the request path (issue #26), loaded by the caller (see telemetry/otel-loader.ts). @default none: no tracing */
  telemetry?: Telemetry;
  /** Makes this daemon a replica of the cluster on its PostgreSQL store (issue #28; see cluster/join-cluster.ts). @default a lone daemon */
  cluster?: ClusterSettings;
}

export interface Daemon {
  app: FastifyInstance;
  manager: MCPManager;
  runtime: SwitchboardRuntime;
  store: ToolCacheStore;
  /** The one ordered event stream; `events` relays it on `/events`. */
  bus: EventBus;
  events: EventHub;
  /** OAuth sign-in to upstreams, and the credentials an embedder stores per server (SPEC §3). */
  oauth: OAuthBroker;
  /** Calls held for an operator's approval (`requireApproval`). */
  approvals: Approvals;
  /** Agents and keys (issue #22): name → settings, key → agent. */
  agents: AgentRegistry;
  /** The agent-facing core (SPEC §17): authenticate, lists, search, the one request path. */
  gateway: Gateway;
  /** Every call, prompt get and resource read (issue #22 item 4). */
  audit: AuditLog;
  logger: Logger;
  /** Starts discovery + connect behind the already-built app; resolves at the startup gate. */
  start(): Promise<LoadError[]>;
  /**
   * Drains like a server that is still alive: keeps listening while in-flight calls finish
   * within `shutdownGraceMs` (`/health` answers 200, every other route 503 `SHUTTING_DOWN` with
   * `Connection: close`), cancels the rest, then closes the listener, disconnects every server
   * and closes the database. Idempotent and joinable.
   */
  close(): Promise<void>;
}

/**
 * The port the daemon listens on: the bound one once `listen` resolved (`serve` binds before it
 * starts anything), else the configured one (an embedder that starts before it listens). With
 * port 0 and no bind yet there is none — and no config file can name a port chosen at random anyway.
 */
function listeningPorts(app: FastifyInstance, configured: number): number[] {
  const address = app.server.address();
  if (typeof address === 'object' && address !== null) return [address.port];
  return configured > 0 ? [configured] : [];
}

/**
 * The one composition root (STYLE rule 1): builds the whole daemon — stores, bus, the upstream
 * side, the runtime, the gateway, the cluster and the HTTP app — without listening or connecting
 * anything. `serve` and the embedding API (`loader.ts`) both start here. Read top to bottom it is
 * the map of what depends on what; each part is handed what it needs and owns the rest.
 */
export function createDaemon(config: DaemonConfig, deps: DaemonDeps = {}): Daemon {
  const { telemetry, cluster: clusterSettings } = deps;
  // Asked for at discovery and at the first connect; `serve` has bound its port by then.
  const listening = (): { host: string; port: number } | undefined => {
    const port = listeningPorts(app, config.port)[0];
    return port === undefined ? undefined : { host: config.host, port };
  };
  // Behind a balancer every replica names the balancer's callback (issue #43); alone, its own address.
  const callbackUrl = (): string | undefined => (config.publicUrl !== undefined ? publicCallbackUrl(config.publicUrl) : callbackUrlOf(app.server.address()));
  const env = deps.env ?? process.env;
  const home = deps.home ?? homedir();
  const cwd = deps.cwd ?? process.cwd();
  const logger = deps.logger ?? createLogger({ level: config.logLevel });
  const clock = deps.clock ?? systemClock;
  const replicaId = clusterSettings?.replicaId;
  const bus = new EventBus({ logger: logger.child({ component: 'events' }), ...(replicaId !== undefined ? { replica: replicaId } : {}) });

  const dbPath = config.dbPath ?? defaultDbPath(home, env);
  const cache = deps.store ? besideOwnCache(deps.store) : (deps.stores ?? openToolCache(dbPath, { logger: logger.child({ component: 'store' }) }));
  for (const warning of cache.warnings) logger.warn({ component: 'store' }, warning);
  const ownsStore = deps.store === undefined;
  // Known secret values, masked in the argument values the audit log keeps (the embeddings
  // endpoint's headers too, and a bearer token alone).
  const embeddingHeaders = Object.values(config.search.embeddings?.headers ?? {});
  const secrets = new SecretValues([config.token, ...embeddingHeaders, ...embeddingHeaders.map((value) => /^Bearer\s+(\S+)$/i.exec(value)?.[1])]);
  const audit = new AuditLog({
    store: cache.audit,
    publish: bus.publish,
    clock,
    ...(config.audit ? { settings: config.audit } : {}),
    secrets,
    logger: logger.child({ component: 'audit' }),
  });

  const oauth = new OAuthBroker({
    store: cache.oauth,
    credentials: cache.credentials,
    clock,
    log: logger.child({ component: 'oauth' }),
    callbackUrl,
    publish: bus.publish,
  });
  const resolver = createValueResolver({
    trustProjectCommands: config.trustProjectCommands,
    logger: logger.child({ component: 'values' }),
    // SPEC §3's stored credentials, in the same store as the OAuth sign-ins.
    credentials: { injectCredentials: (name) => oauth.storedCredential(name) },
  });
  const agents = new AgentRegistry({
    config: config.agents ?? {},
    store: cache.agents,
    ...(config.token !== undefined ? { token: config.token } : {}),
    ...(ownsStore ? { operatorKeyPath: operatorKeyPath(dbPath) } : {}),
    ...(clusterSettings?.operatorKey !== undefined ? { sharedOperatorKey: clusterSettings.operatorKey } : {}),
    clock,
    logger: logger.child({ component: 'agents' }),
    publish: bus.publish,
    tokenAgents: config.agentAuth?.jwt !== undefined,
  });
  /** This process's instance id (SPEC §11); see `identity` and `start`. */
  let instanceId: string | undefined;

  const manager = new MCPManager({
    logger,
    store: cache.store,
    startupGateMs: config.startupGateMs,
    // stderr lines and MCP log messages become `server.log` events (`switchboard logs --follow`).
    connect: forwardServerLogs(deps.connect ?? connectToServer, bus.publish),
    env,
    health: healthOptions(config.health, config),
    protocol: config.protocol,
    clock,
    oauth,
    // The id is read from the state store in start(), before anything connects; asked for
    // earlier (an embedder that never starts), this is a fresh instance.
    identity: () => {
      const where = listening();
      const label = where === undefined ? 'switchboard' : `${isIP(where.host) === 6 ? `[${where.host}]` : where.host}:${where.port}`;
      return { id: (instanceId ??= randomUUID()), label, ...(clusterSettings?.clusterId !== undefined ? { cluster: clusterSettings.clusterId } : {}) };
    },
    resolveValues: async (name, serverConfig, source) => {
      const { config: resolved, warnings } = await resolver.resolve(name, serverConfig, source);
      for (const warning of warnings) logger.warn({ server: name }, warning);
      secrets.remember(name, resolved);
      return resolved;
    },
    connectOptions: {
      // No roots of the daemon's own (its working directory is $HOME under a service): a server
      // is told those of its entry, or an agent's during that agent's call (issue #36 item 1).
      ...(deps.roots ? { roots: deps.roots } : {}),
      inheritEnv: config.inheritEnv,
      sandbox: sandboxContext(config, { home, env, dbPath, configPath: resolveConfigPath({ path: deps.configPath, env, home, cwd }).path }),
      ...(deps.clientInfo ? { clientInfo: deps.clientInfo } : {}),
    },
    publish: bus.publish,
    pins: cache.pins,
    ...(config.pinTools ? { pinTools: config.pinTools } : {}),
  });

  // Decisions go to the audit log once it exists (issue #22 item 4): wire `onDecision` here.
  const approvals = new Approvals({
    publish: bus.publish,
    clock,
    agentGlobs: (agent) => agents.get(agent.name)?.settings.requireApproval ?? [],
    ...(config.approvalTimeoutMs !== undefined ? { timeoutMs: config.approvalTimeoutMs } : {}),
    ...(replicaId !== undefined ? { replicaId } : {}),
    onDecision: (decision, args) => auditDecision(audit, decision, args),
    showArguments: (args) => audit.shownArguments(args),
    ...(config.approvalPrompt !== undefined ? { prompt: config.approvalPrompt } : {}),
    ...(config.approvalUrl !== undefined ? { dashboardUrl: config.approvalUrl } : {}),
  });

  const discover =
    deps.discover ??
    (() => {
      const port = listening()?.port;
      return discoverMCPServers({
        cwd,
        home,
        env,
        ...(deps.platform ? { platform: deps.platform } : {}),
        ...(deps.configPath ? { configPath: deps.configPath } : {}),
        ...(config.enableProjectConfig !== undefined ? { enableProjectConfig: config.enableProjectConfig } : {}),
        selfPorts: port === undefined ? [] : [port],
      });
    });

  // Stdio children are recorded beside the database, and what a killed process left there is
  // reaped at start (SPEC §6 "No orphans, ever"). Reaped before recording our own, and reaping
  // runs on while the servers connect: it only ever kills what it verified is a leftover.
  const stateDir = ownsStore && dbPath !== ':memory:' ? dirname(dbPath) : undefined;
  let children: { reaped: Promise<unknown>; release: () => void } | undefined;

  // Argument policies apply live (issue #40): each discovery that read a usable file of our own hands
  // its rules over. A file with a rule that does not compile is ignored whole, so the last good set stays.
  const discoverAndApplyPolicies = async (): Promise<DiscoveryResult> => {
    const found = await discover();
    if (found.policies) gateway.policies.replace(found.policies);
    return found;
  };

  const runtime = new SwitchboardRuntime({
    manager,
    discover: discoverAndApplyPolicies,
    publish: bus.publish,
    logger,
    storeWarnings: () => [...cache.warnings, ...(cache.liveWarnings?.() ?? [])],
    watchConfig: config.watch,
    onClosed: async () => {
      await keptResults.close();
      await audit.close();
      await cache.audit.close();
      if (ownsStore) await cache.store.close();
      await children?.reaped;
      children?.release();
      await cache.oauth.close();
      if (ownsStore) await cache.close?.();
      // Every server is gone by now: nothing of this daemon may outlive its exit.
      await endChildWatchdog();
    },
  });

  // Whole results behind cut ones (issue #38): spilled beside the store, this process's own folder.
  const keptResults = new ResultHandles(
    { ...config.results, ...(dbPath !== ':memory:' ? { dir: join(dirname(dbPath), 'results') } : {}) },
    clock,
    logger.child({ component: 'results' }),
  );
  const shutdown = new AbortController();
  // BM25 alone, or hybrid with the operator's embeddings endpoint, vectors cached in the store (issue #37).
  const search = setUpSearch(config.search, {
    manager,
    state: cache.state,
    audit: config.audit?.enabled !== false ? cache.audit : undefined,
    subscribe: (listener) => bus.subscribe(listener),
  });
  const gateway = new Gateway({
    keptResults,
    ...(cache.budgets ? { budgetStore: cache.budgets } : {}),
    ...(cache.rateLimits ? { rateLimits: cache.rateLimits } : {}),
    tasks: { ...(cache.tasks ? { store: cache.tasks } : {}), ...(replicaId !== undefined ? { replica: replicaId } : {}) },
    resultCaps: { maxResultTokens: config.maxResultTokens, tools: config.results?.tools },
    manager,
    runtime,
    agents,
    approvals,
    audit,
    logger,
    clock,
    shutdownSignal: shutdown.signal,
    auditRequests: config.audit?.enabled !== false,
    catalogue: {
      mode: config.catalogue,
      searchAbove: config.searchAbove,
      pinned: config.pinned,
      answerBytes: config.search.answerBytes,
      usage: search.usage,
      stats: search.stats,
      ...(search.searcher ? { searcher: search.searcher } : {}),
    },
    searchHealth: search.health,
    searchStats: () =>
      search.stats.snapshot(
        manager
          .getCatalogue()
          .list()
          .map((tool) => tool.name),
        search.usage.conversions(),
      ),
    scripts: scriptSettings(config),
    policies: config.policies ?? [],
    ...(config.agentAuth?.jwt ? { jwt: config.agentAuth.jwt } : {}),
    ...(telemetry ? { telemetry } : {}),
  });
  const events = new EventHub({ bus, manager, runtime, agentValid: (agent) => gateway.auth.isActive(agent) });
  const drain = new RequestDrain();
  const cluster = clusterSettings
    ? createCluster(clusterSettings, {
        bus,
        manager,
        runtime,
        agents,
        oauth,
        logger,
        url: () => advertisedUrl(config.host, listeningPorts(app, config.port)[0] ?? 0),
        traffic: () => trafficTotals(gateway, manager),
      })
    : undefined;
  const app = buildApp({
    config,
    manager,
    runtime,
    bus,
    events,
    oauth,
    gateway,
    logger,
    shutdownSignal: shutdown.signal,
    drain,
    ...(cluster && clusterSettings
      ? {
          cluster: {
            replicaId: cluster.replicaId,
            sealKey: clusterSettings.sealKey,
            replicas: () => cluster.replicas(),
            findReplica: (id: string) => cluster.findReplica(id),
            // Checked as often as replicas beat: an owner that stopped is cut off within ~4 intervals.
            owners: new OwnerWatch((id) => cluster.findReplica(id), clusterSettings.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS),
          },
        }
      : {}),
  });

  const start = async (): Promise<LoadError[]> => {
    // Joined before the servers connect: the heartbeat lists this replica while it starts.
    await cluster?.start();
    if (stateDir !== undefined && !children) {
      const log = logger.child({ component: 'children' });
      children = { reaped: reapLeftovers({ stateDir, logger: log }), release: keepChildRecords(stateDir, log) };
    }
    // A replica's id is its own (issue #43 item 5): one kept per port would be every replica's.
    if (instanceId === undefined && clusterSettings === undefined) {
      const loaded = await loadInstanceId(cache.state, config.port > 0 ? config.port : undefined);
      instanceId ??= loaded;
    }
    void audit.start();
    return runtime.start();
  };

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      // From here every route but /health answers 503 SHUTTING_DOWN with Connection: close.
      runtime.stopAccepting();
      // Nobody can approve from here on (operator routes answer 503): held calls end now, not at the grace's end.
      approvals.close();
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
        // Code mode's warm workers: no run is left to take one.
        await gateway.scripts.close();
        // Leaves the cluster (its heartbeat row goes) while the store is still open.
        await cluster?.close();
        // Disconnects every server, then closes the store and the child records.
        await runtime.close();
        events.stop();
      }
    })();
    return closing;
  };

  return { app, manager, runtime, store: cache.store, bus, events, oauth, approvals, agents, gateway, audit, logger, start, close };
}
