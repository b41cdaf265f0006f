import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { DaemonConfig } from './config/schema.js';
import type { ClusterAction } from './cluster/cluster.js';
import { createCluster, type ClusterSettings } from './cluster/join-cluster.js';
import { advertisedUrl } from './util/replica-id.js';
import { buildApp } from './http/app.js';
import { RequestDrain } from './http/lifecycle/drain.js';
import { EventHub } from './http/ws/event-hub.js';
import type { Approvals } from './gateway/approvals/approvals.js';
import type { MCPManager } from './upstream/manager.js';
import { callbackUrlOf, type OAuthBroker } from './upstream/oauth/broker.js';
import { createRuntime, type RuntimeDeps } from './runtime/compose.js';
import type { AgentRegistry } from './gateway/agents/agent-registry.js';
import type { AuditLog } from './gateway/audit/audit-log.js';
import type { EventBus } from './events/event-bus.js';
import type { SwitchboardRuntime } from './runtime/runtime.js';
import type { ToolCacheStore } from './store/ports.js';
import type { Telemetry } from './telemetry/telemetry.js';

/** The runtime's edges (logger, store, clock, connect, discovery…); where it listens is the daemon's own. */
export type DaemonDeps = Omit<RuntimeDeps, 'listening' | 'callbackUrl' | 'replicaId'> & {
  /** OpenTelemetry for the request path (issue #26), loaded by the caller (see telemetry/otel-loader.ts). @default none: no tracing */
  telemetry?: Telemetry;
  /** Makes this daemon a replica of the cluster on its PostgreSQL store (issue #28; see cluster/join-cluster.ts). @default a lone daemon */
  cluster?: ClusterSettings;
};

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
  /** Every call, prompt get and resource read (issue #22 item 4). */
  audit: AuditLog;
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

/** How long calls cancelled at the end of the shutdown grace get to send their 503. */
const ABORTED_ANSWER_MS = 250;

/**
 * Builds the whole daemon without listening or connecting anything: the runtime from the
 * composition root, and the HTTP app (with the `/events` hub) on top.
 */
export function createDaemon(config: DaemonConfig, allDeps: DaemonDeps = {}): Daemon {
  const { telemetry, cluster: clusterSettings, ...deps } = allDeps;
  const composed = createRuntime(config, {
    ...deps,
    ...(clusterSettings ? { replicaId: clusterSettings.replicaId } : {}),
    // Asked for at discovery and at the first connect; `serve` has bound its port by then.
    listening: () => {
      const port = listeningPorts(app, config.port)[0];
      return port === undefined ? undefined : { host: config.host, port };
    },
    callbackUrl: () => callbackUrlOf(app.server.address()),
    ...(config.port > 0 ? { fixedPort: config.port } : {}),
  });
  const { bus, manager, runtime, store, oauth, approvals, agents, audit, logger } = composed;
  const events = new EventHub({ bus, manager, runtime, agentValid: (agent) => agents.isActive(agent.name) });
  const shutdown = new AbortController();
  const drain = new RequestDrain();
  const cluster = clusterSettings
    ? createCluster(clusterSettings, { bus, manager, runtime, agents, logger, url: () => advertisedUrl(config.host, listeningPorts(app, config.port)[0] ?? 0) })
    : undefined;
  const app = buildApp({
    config, manager, runtime, bus, events, oauth, approvals, agents, logger, shutdownSignal: shutdown.signal, drain, audit,
    ...(telemetry ? { telemetry } : {}),
    ...(cluster && clusterSettings ? { cluster: { replicaId: cluster.replicaId, sealKey: clusterSettings.sealKey, replicas: () => cluster.replicas(), findReplica: (id: string) => cluster.findReplica(id), announce: (action: ClusterAction) => cluster.announce(action) } } : {}),
  });

  const start = async (): Promise<unknown> => {
    // Joined before the servers connect: the heartbeat lists this replica while it starts.
    await cluster?.start();
    return composed.start();
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
        // Leaves the cluster (its heartbeat row goes) while the store is still open.
        await cluster?.close();
        // Disconnects every server, then closes the store and the child records.
        await composed.close();
        events.stop();
      }
    })();
    return closing;
  };

  return { app, manager, runtime, store, bus, events, oauth, approvals, agents, audit, logger, start, close };
}
