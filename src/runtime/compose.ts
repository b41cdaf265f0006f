import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { discoverMCPServers } from '../config/discover.js';
import { defaultDbPath } from '../config/load.js';
import { createValueResolver } from '../config/resolve-values.js';
import type { DaemonConfig } from '../config/schema.js';
import { SecretValues } from '../config/secret-values.js';
import type { DiscoveryResult } from '../config/types.js';
import { createLogger } from '../logger.js';
import type { ApprovalOutcome } from '../events/daemon-events.js';
import { Approvals } from '../gateway/approvals/approvals.js';
import { MCPManager, type HealthOptions } from '../upstream/manager.js';
import { OAuthBroker } from '../upstream/oauth/broker.js';
import { keepChildRecords } from '../upstream/process/child-registry.js';
import { reapLeftovers } from '../upstream/process/leftover-reaper.js';
import { forwardServerLogs } from '../upstream/process/log-forwarding.js';
import { connectToServer, type ConnectOptions } from '../upstream/transport/client.js';
import { loadInstanceId } from '../upstream/instance.js';
import { openAuditStore } from '../store/audit-store.js';
import { openMemoryOAuthStore, openToolCache, type OpenedStores } from '../store/open-tool-cache.js';
import { MemoryAgentStore } from '../store/agent-store.js';
import { MemoryStateStore } from '../store/state-store.js';
import { MemoryToolPinStore } from '../store/tool-pin-store.js';
import type { ToolCacheStore, AuditOutcome } from '../store/ports.js';
import { systemClock, type Clock } from '../util/clock.js';
import { AgentRegistry } from '../gateway/agents/agent-registry.js';
import { AuditLog } from '../gateway/audit/audit-log.js';
import { EventBus } from '../events/event-bus.js';
import { operatorKeyPath } from '../gateway/agents/operator-key.js';
import { SwitchboardRuntime, type LoadError } from './runtime.js';

/** The settings the runtime reads; the daemon hands in its whole config. */
export type RuntimeConfig = Pick<
  DaemonConfig,
  'startupGateMs' | 'trustProjectCommands' | 'inheritEnv' | 'protocol' | 'health' | 'watch' | 'logLevel'
> &
  Partial<Pick<DaemonConfig, 'dbPath' | 'roots' | 'enableProjectConfig' | 'approvalTimeoutMs' | 'agents' | 'token' | 'pinTools' | 'audit' | 'maxConcurrentCalls' | 'queueSize'>>;

/** The edges of the runtime, each with the real thing as its default (STYLE rule 11). */
export interface RuntimeDeps {
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
  /**
   * Where this process serves MCP itself, asked for at each discovery and at the first connect:
   * discovery skips configs pointing at it, and the instance id (SPEC §11) is kept per port.
   * @default nowhere
   */
  listening?: () => { host: string; port: number } | undefined;
  /**
   * The port this process always serves on, when it has a fixed one: the instance id (SPEC §11)
   * is kept per fixed port, so the same daemon keeps its place in any loop. Without one the id
   * is fresh each run. @default none
   */
  fixedPort?: number;
  /**
   * The redirect URI of OAuth sign-ins (the daemon's `/oauth/callback`). Without one nobody could
   * come back from a sign-in, so a server that asks for OAuth fails its connect instead.
   */
  callbackUrl?: () => string | undefined;
  /** This replica's id when the daemon is one of a cluster (issue #28): stamped on its events and approval ids. @default none */
  replicaId?: string;
}

/** Everything but HTTP: what `createDaemon` serves and what `discoverAndLoadMCPTools` hands out. */
export interface ComposedRuntime {
  /** The one ordered event stream (`seq`); subscribe here for every event of the runtime. */
  bus: EventBus;
  manager: MCPManager;
  runtime: SwitchboardRuntime;
  store: ToolCacheStore;
  /** OAuth sign-in to upstreams, and the credentials an embedder stores per server (SPEC §3). */
  oauth: OAuthBroker;
  /** Calls held for an operator's approval (`requireApproval`, issue #22). */
  approvals: Approvals;
  /** Agents and keys, the operator's included (issue #22). */
  agents: AgentRegistry;
  /** Every call, prompt get and resource read, kept with retention (issue #22 item 4). */
  audit: AuditLog;
  logger: Logger;
  /** Reaps what a killed predecessor left running, then discovers and connects behind the startup gate. */
  start(): Promise<LoadError[]>;
  /** `runtime.close()`: disconnects every server, then closes what was opened here. Joinable. */
  close(): Promise<void>;
}

/**
 * The composition root: builds the bus, the store, the manager and the runtime from their
 * dependencies, without connecting anything. The daemon and the embedding API both start here.
 */
export function createRuntime(config: RuntimeConfig, deps: RuntimeDeps = {}): ComposedRuntime {
  const env = deps.env ?? process.env;
  const home = deps.home ?? homedir();
  const cwd = deps.cwd ?? process.cwd();
  const logger = deps.logger ?? createLogger({ level: config.logLevel });
  const clock = deps.clock ?? systemClock;
  const bus = new EventBus({ logger: logger.child({ component: 'events' }), ...(deps.replicaId !== undefined ? { replica: deps.replicaId } : {}) });

  const dbPath = config.dbPath ?? defaultDbPath(home, env);
  const cache = deps.store ? besideOwnCache(deps.store) : (deps.stores ?? openToolCache(dbPath, { logger: logger.child({ component: 'store' }) }));
  for (const warning of cache.warnings) logger.warn({ component: 'store' }, warning);
  const ownsStore = deps.store === undefined;
  // Known secret values, masked in the argument values the audit log keeps.
  const secrets = new SecretValues([config.token]);
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
    callbackUrl: deps.callbackUrl ?? (() => undefined),
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
    clock,
    logger: logger.child({ component: 'agents' }),
  });
  const listeningPort = (): number | undefined => deps.listening?.()?.port;
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
    ...(deps.callbackUrl ? { oauth } : {}),
    // The id is read from the state store in start(), before anything connects; asked for
    // earlier (an embedder that never starts), this is a fresh instance.
    identity: () => {
      const where = deps.listening?.();
      const label = where === undefined ? 'switchboard' : `${isIP(where.host) === 6 ? `[${where.host}]` : where.host}:${where.port}`;
      return { id: (instanceId ??= randomUUID()), label };
    },
    resolveValues: async (name, serverConfig, source) => {
      const { config: resolved, warnings } = await resolver.resolve(name, serverConfig, source);
      for (const warning of warnings) logger.warn({ server: name }, warning);
      secrets.remember(name, resolved);
      return resolved;
    },
    connectOptions: {
      roots: config.roots ?? [cwd],
      inheritEnv: config.inheritEnv,
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
    ...(deps.replicaId !== undefined ? { replicaId: deps.replicaId } : {}),
    onDecision: (decision) => {
      const requestedAt = Date.parse(decision.requestedAt);
      audit.recordWithArguments({
        ts: requestedAt,
        ...(decision.agent !== undefined ? { agent: decision.agent } : {}),
        transport: 'operator',
        server: decision.server,
        kind: 'approval',
        name: decision.name,
        outcome: APPROVAL_AUDIT_OUTCOME[decision.outcome],
        durationMs: Date.parse(decision.decidedAt) - requestedAt,
        resultBytes: 0,
      }, decision.arguments);
    },
  });

  const discover =
    deps.discover ??
    (() => {
      const port = listeningPort();
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

  const runtime = new SwitchboardRuntime({
    manager,
    discover,
    publish: bus.publish,
    logger,
    storeWarnings: () => [...cache.warnings, ...(cache.liveWarnings?.() ?? [])],
    watchConfig: config.watch,
    onClosed: async () => {
      await audit.close();
      await cache.audit.close();
      if (ownsStore) await cache.store.close();
      await children?.reaped;
      children?.release();
      await cache.oauth.close();
      if (ownsStore) await cache.close?.();
    },
  });

  const start = async (): Promise<LoadError[]> => {
    if (stateDir !== undefined && !children) {
      const log = logger.child({ component: 'children' });
      children = { reaped: reapLeftovers({ stateDir, logger: log }), release: keepChildRecords(stateDir, log) };
    }
    if (instanceId === undefined) {
      const loaded = await loadInstanceId(cache.state, deps.fixedPort);
      instanceId ??= loaded;
    }
    void audit.start();
    return runtime.start();
  };

  return { bus, manager, runtime, store: cache.store, oauth, approvals, agents, audit, logger, start, close: () => runtime.close() };
}

/** An approval decision as an audit outcome. */
const APPROVAL_AUDIT_OUTCOME = { approved: 'ok', denied: 'denied', timeout: 'timeout', withdrawn: 'cancelled' } as const satisfies Record<ApprovalOutcome, AuditOutcome>;

/** `health: true | false | {…}` and the traffic limits of the config file → the manager's health options. */
function healthOptions(health: RuntimeConfig['health'], limits: Pick<RuntimeConfig, 'maxConcurrentCalls' | 'queueSize'>): HealthOptions {
  const traffic = {
    ...(limits.maxConcurrentCalls !== undefined ? { maxConcurrentCalls: limits.maxConcurrentCalls } : {}),
    ...(limits.queueSize !== undefined ? { queueSize: limits.queueSize } : {}),
  };
  if (typeof health === 'boolean') return { enabled: health, ...traffic };
  return { enabled: health.enabled, pingIntervalMs: health.pingIntervalMs, pingTimeoutMs: health.pingTimeoutMs, ...traffic };
}

/** The stores that go with an embedder's own tool cache: state and sign-ins last as long as this process. */
function besideOwnCache(store: ToolCacheStore): OpenedStores {
  const oauth = openMemoryOAuthStore();
  return { store, state: new MemoryStateStore(), oauth, credentials: oauth.credentials, agents: new MemoryAgentStore(), pins: new MemoryToolPinStore(), audit: openAuditStore(undefined, true), warnings: [] };
}
