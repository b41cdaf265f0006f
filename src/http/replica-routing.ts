import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forwardRequest, wasForwarded } from '../cluster/forward-request.js';
import type { OwnerWatch } from '../cluster/owner-watch.js';
import { ownerOf } from '../util/replica-id.js';
import { lostCallEvents } from './errors/lost-call-events.js';

/**
 * Requests for what another replica holds go to that replica (issue #28 item 3): a 2025-era
 * `/mcp` session (its `Mcp-Session-Id` names the replica that made it), a 2026-07-28 retry that
 * continues a call parked on another replica (its `requestState`), a task's `tasks/update` or
 * `tasks/cancel` (its `taskId` names the replica running it), and an operator's decision on
 * a call held there (the approval id). Any load balancer works then, sticky or not; stickiness
 * only saves the extra hop. When the owner is gone the request is served here, which answers
 * as for any unknown id: `404 MCP_SESSION_NOT_FOUND`, and the client starts a new session.
 */

export interface ReplicaRoutingOptions {
  replicaId: string;
  /** The cluster's shared key: proves a forwarded request came from a replica (forward-request.ts). */
  sealKey: Buffer;
  /** The live replica of this id, if any. */
  findReplica(id: string): Promise<{ url: string } | undefined>;
  /** Ends forwarded requests whose owner stopped beating (cluster/owner-watch.ts). @default none */
  owners?: OwnerWatch;
}

/** The replica named by what `request` continues, if another one's. */
export function requestOwner(request: FastifyRequest): string | undefined {
  const route = request.routeOptions.url;
  if (route === '/mcp') {
    const session = request.headers['mcp-session-id'];
    if (typeof session === 'string') return ownerOf(session);
    const body = request.body as { method?: unknown; params?: { requestState?: unknown; taskId?: unknown } } | undefined;
    // A task's update or cancel goes to the replica running its call (issue #41); any replica answers tasks/get from the store.
    if ((body?.method === 'tasks/update' || body?.method === 'tasks/cancel') && typeof body.params?.taskId === 'string') return ownerOf(body.params.taskId);
    const state = body?.params?.requestState;
    return typeof state === 'string' ? ownerOf(state) : undefined;
  }
  if (route?.startsWith('/approvals/:id/')) return ownerOf((request.params as { id?: string }).id ?? '');
  return undefined;
}

export function addReplicaRouting(app: FastifyInstance, options: ReplicaRoutingOptions): void {
  app.addHook('preHandler', async (request, reply) => {
    if (wasForwarded(request)) return;
    const owner = requestOwner(request);
    if (owner === undefined || owner === options.replicaId) return;
    const replica = await options.findReplica(owner);
    // A relayed call whose owner dies mid-stream gets an answer: its outcome is unknown.
    const lostStream = (): string | undefined => (request.method === 'POST' ? lostCallEvents(request.body) : undefined);
    // Watched until the client's response is over, relayed or answered here (at once when the
    // client left while the owner was looked up: its 'close' has come already).
    const watched = replica ? options.owners?.watch(owner) : undefined;
    if (watched && request.raw.socket?.destroyed) watched.release();
    else if (watched) reply.raw.once('close', watched.release);
    const forwarding = { lostStream, ...(watched ? { ownerGone: watched.gone } : {}) };
    if (replica && (await forwardRequest(request, reply, replica.url, options.replicaId, options.sealKey, forwarding))) return reply;
    request.log.info({ owner }, 'the replica owning this request is gone; answered here');
  });
}
