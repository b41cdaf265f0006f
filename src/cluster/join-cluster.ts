import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { MCPManager } from '../upstream/manager.js';
import type { AgentRegistry } from '../gateway/agents/agent-registry.js';
import type { OAuthBroker } from '../upstream/oauth/broker.js';
import type { EventBus } from '../events/event-bus.js';
import type { SwitchboardRuntime } from '../runtime/runtime.js';
import { ClusterChannel } from './cluster-channel.js';
import { Cluster } from './cluster.js';
import { newReplicaId } from '../util/replica-id.js';
import { ReplicaHeartbeats } from './replica-heartbeats.js';
import { TrafficSampler, type TrafficTotals } from './replica-traffic.js';
import { claimClusterIdentity } from './cluster-identity.js';

/**
 * How a daemon on a PostgreSQL store becomes a replica of a cluster (issue #28): every daemon
 * on the same database is one. What `serve` prepares before the daemon is built, and the
 * factory the daemon calls once its runtime exists.
 */

/** The state-store key of the cluster's sealing key (relay-state.ts), claimed by the first replica. */
export const SEAL_KEY_STATE = 'cluster.seal-key';

export interface ClusterSettings {
  /** The store's database: the channel listens on a connection of its own to it. */
  connectionString: string;
  /** The store's pool: heartbeats go through it. */
  pool: pg.Pool;
  replicaId: string;
  /** The key every replica seals 2026-07-28 continuation state with. */
  sealKey: Buffer;
  /**
   * The cluster's id, in every replica's loop-detection advertisement (issue #43 item 5). @default
   * none: replicas are not told apart from other Switchboards
   */
  clusterId?: string;
  /**
   * The operator key every replica accepts when no `token` is set (issue #43 item 4). @default
   * none: each replica its own `operator.key`
   */
  operatorKey?: string;
  /**
   * How often this replica writes its heartbeat (a replica three intervals silent is not live):
   * for tests that wait on what a beat carries. @default HEARTBEAT_INTERVAL_MS (2 s)
   */
  heartbeatIntervalMs?: number;
}

/**
 * This replica's id, and the cluster's sealing key, id and (without a `token`) operator key: the
 * first replica's, or ours if we are first.
 */
export async function prepareCluster(
  store: { connectionString: string; pool: pg.Pool; state: { claim(key: string, value: string): Promise<string> } },
  options: { token?: string | undefined } = {},
): Promise<ClusterSettings> {
  const sealKey = Buffer.from(await store.state.claim(SEAL_KEY_STATE, randomBytes(32).toString('hex')), 'hex');
  const identity = await claimClusterIdentity(store.state, options);
  return { connectionString: store.connectionString, pool: store.pool, replicaId: newReplicaId(), sealKey, ...identity };
}

export interface ClusterParts {
  bus: EventBus;
  manager: Pick<MCPManager, 'listServers' | 'getServer' | 'approveTools' | 'resumeAfterSignIn'>;
  runtime: Pick<SwitchboardRuntime, 'reloadAll' | 'reloadServer'>;
  agents: Pick<AgentRegistry, 'refresh'>;
  oauth: Pick<OAuthBroker, 'forgetHere'>;
  logger: Logger;
  /** Where the others reach this replica (known once it listens). */
  url: () => string;
  /** Its call counters and limits now, for the traffic its heartbeat carries (issue #43). @default none written */
  traffic?: () => TrafficTotals;
}

export function createCluster(settings: ClusterSettings, parts: ClusterParts): Cluster {
  const logger = parts.logger.child({ component: 'cluster' });
  const channel = new ClusterChannel({ connectionString: settings.connectionString, replicaId: settings.replicaId, logger });
  const sampler = parts.traffic && new TrafficSampler(parts.traffic);
  const heartbeats = new ReplicaHeartbeats({
    pool: settings.pool,
    id: settings.replicaId,
    url: parts.url,
    view: () => parts.manager.listServers().map(({ name, status, toolCount }) => ({ name, status, toolCount })),
    ...(sampler ? { traffic: () => sampler.sample() } : {}),
    ...(settings.heartbeatIntervalMs !== undefined ? { intervalMs: settings.heartbeatIntervalMs } : {}),
    logger,
  });
  return new Cluster({
    replicaId: settings.replicaId,
    channel,
    heartbeats,
    bus: parts.bus,
    logger,
    effects: {
      refreshAgents: () => parts.agents.refresh(),
      approveTools: (server, tools, follows) => {
        // Only what this replica holds with the very definition approved: its own server may
        // hold another one (or nothing yet), and that is for an operator to review.
        const held = parts.manager.getServer(server)?.heldTools ?? [];
        const same = held.filter((h) => tools.some((t) => t.name === h.name && t.hash === h.after.hash)).map((h) => h.name);
        if (same.length > 0) parts.manager.approveTools(server, same, Object.fromEntries(tools.map((t) => [t.name, t.hash])), follows);
      },
      resumeAfterSignIn: (server) => void parts.manager.resumeAfterSignIn(server),
      // The tokens left the store with the logout; the reload that follows it (relayed too)
      // reconnects the server here without them, and it asks for a sign-in again.
      signedOut: (server) => parts.oauth.forgetHere(server),
      reload: (server, force, follows) => (server === null ? parts.runtime.reloadAll({ force, follows }) : parts.runtime.reloadServer(server, { follows })),
    },
  });
}
