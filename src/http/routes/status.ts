import type { FastifyPluginCallback } from 'fastify';
import type { ReplicaInfo } from '../../cluster/replica-heartbeats.js';
import { clusterTraffic } from '../../cluster/replica-traffic.js';
import { globMatcher } from '../../config/agent-schema.js';
import type { ErrorInfo } from '../../errors.js';
import { SERVER_STATUSES, type ServerStatus } from '../../events/daemon-events.js';
import type { MCPManager } from '../../upstream/manager.js';
import type { AgentRegistry, SearchHealth } from '../../gateway/index.js';
import type { SwitchboardRuntime } from '../../runtime/runtime.js';
import { PACKAGE_VERSION } from '../package-info.js';

export interface StatusRoutesOptions {
  manager: MCPManager;
  runtime: SwitchboardRuntime;
  /** When the daemon was built (ms since epoch), for uptime. */
  startedAt: number;
  /** An agent's `/status` shows only the servers its `servers` globs match (issue #22). */
  agents?: Pick<AgentRegistry, 'get'>;
  /** In a cluster (issue #28), every replica by heartbeat with its view of the servers. @default a lone daemon: none listed */
  replicas?: () => Promise<ReplicaInfo[]>;
  /** How tool search ranks, and its embeddings' state and warning (issue #37). */
  search?: () => SearchHealth;
}

/**
 * `GET /status`: one read of everything an operator or dashboard wants to see. Fields are picked
 * one by one — never spread from the discovery result, which holds configs (env, headers) and
 * the Exa keys; those keys are reported as a count only.
 */
export const statusRoutes: FastifyPluginCallback<StatusRoutesOptions> = (app, { manager, runtime, startedAt, agents, replicas, search }, done) => {
  app.get('/status', async (request) => {
    const agent = request.agent ? agents?.get(request.agent.name) : undefined;
    if (request.agent) {
      // Scoped: the agent's servers only, and nothing of the config (discovery, other servers' errors).
      // A JWT's agent (issue #40) has its scope on its ref, from its claims (and its config agent's).
      const view = request.agent.view;
      const jwtScope = view ? (name: string) => view.allowsServer(name) : () => true;
      const inScope = request.agent.claims !== undefined ? jwtScope : agent ? globMatcher(agent.settings.servers) : () => false;
      const servers = manager.listServers().filter((server) => inScope(server.name));
      return {
        state: runtime.state,
        version: PACKAGE_VERSION,
        agent: request.agent.name,
        serverCounts: countStatuses(servers),
        servers,
      };
    }
    const servers = manager.listServers();
    const catalogue = manager.getCatalogue();
    const discovery = runtime.lastDiscovery;
    const discoveryError = runtime.lastDiscoveryError;
    const serverCounts = countStatuses(servers);
    const eraCounts = { legacy: 0, modern: 0 };
    for (const server of servers) if (server.protocol) eraCounts[server.protocol.era] += 1;
    const toolCount = catalogue.list().length;
    return {
      state: runtime.state,
      version: PACKAGE_VERSION,
      instance: { id: manager.identity.id, label: manager.identity.label, ...(manager.identity.cluster !== undefined ? { cluster: manager.identity.cluster } : {}) },
      startedAt: new Date(startedAt).toISOString(),
      uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
      catalogue: { version: catalogue.version, toolCount },
      toolCount,
      serverCounts,
      eraCounts,
      servers,
      errors: runtime.errors.map(({ path, error }) => ({ path, error: errorInfo(error) })),
      collisions: catalogue.collisions(),
      // Prompts are named like tools; a resource URI two servers list goes to the first by name.
      promptCollisions: manager.getPrompts().collisions(),
      resourceCollisions: manager.getResources().collisions(),
      discovery: {
        error: discoveryError ? errorInfo(discoveryError) : null,
        warnings: discovery.warnings,
        shadowed: discovery.shadowed.map(({ name, source, shadowedBy, reason }) => ({ name, source, shadowedBy, reason })),
        skipped: discovery.skipped.map(({ name, source, reason, message }) => ({ name, source, reason, message })),
        exaApiKeyCount: discovery.exaApiKeys.length,
      },
      storeWarnings: runtime.storeWarnings,
      ...(search ? { search: search() } : {}),
      ...(replicas ? await clusterView(replicas) : {}),
    };
  });

  done();
};

/** Every replica by its heartbeat, and their traffic summed over the live ones (issue #43). */
async function clusterView(replicas: () => Promise<ReplicaInfo[]>): Promise<{ replicas: ReplicaInfo[]; cluster: ReturnType<typeof clusterTraffic> }> {
  const listed = await replicas();
  return { replicas: listed, cluster: clusterTraffic(listed) };
}

function countStatuses(servers: ReadonlyArray<{ status: ServerStatus }>): Record<ServerStatus, number> {
  const counts = Object.fromEntries(SERVER_STATUSES.map((s) => [s, 0])) as Record<ServerStatus, number>;
  for (const server of servers) counts[server.status] += 1;
  return counts;
}

function errorInfo({ code, message }: ErrorInfo): ErrorInfo {
  return { code, message };
}
