import { classifyInboundRequest, createMcpHandler, isInitializeRequest, PROTOCOL_VERSION_META_KEY, type InboundHttpRequest } from '@modelcontextprotocol/server';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { errorMessage, SwitchboardError } from '../../errors.js';
import type { MCPManager } from '../../upstream/manager.js';
import type { EventBus } from '../../events/event-bus.js';
import type { SwitchboardRuntime } from '../../runtime/runtime.js';
import { PendingCount } from '../../util/pending-count.js';
import { waitFor } from '../../util/wait-for.js';
import type { AgentRef } from '../../gateway/index.js';
import type { Gateway, RequestOptions } from '../../gateway/index.js';
import { JSON_RPC_CONTENT_TYPE, jsonRpcRefusal, sendJsonRpcRefusal } from '../errors/jsonrpc-error.js';
import { ABORTED_ANSWER_MS } from '../lifecycle/drain.js';
import { createAgentServer, type AgentSource } from '../endpoint/agent-server.js';
import { LegacySessions, type LegacySession } from '../endpoint/legacy-sessions.js';
import { deferHeaders } from '../endpoint/deferred-headers.js';
import { createServerParts, type ClusterParts } from '../endpoint/server-parts.js';
import { SessionRelay } from '../endpoint/session-relay.js';
import { ModernServers } from '../endpoint/modern-servers.js';
import { modernNodeHandler } from '../endpoint/modern-node.js';
import { directRoute, ModernDirect } from '../endpoint/modern-direct.js';
import { authOf } from '../endpoint/request-agent.js';

export interface McpRoutesOptions {
  manager: AgentSource & Pick<MCPManager, 'onServerTraffic'>;
  /** Catalogue changes, for `list_changed`. */
  bus: Pick<EventBus, 'subscribe'>;
  runtime: Pick<SwitchboardRuntime, 'state' | 'whenReady'>;
  /** Aborted when shutdown's grace runs out: in-flight `/mcp` calls are cancelled then. */
  shutdownSignal: AbortSignal;
  /** The one call path shared with REST (deadline, cancel, progress, metrics). */
  gateway: Gateway;
  /** Changes closer together than this produce one `list_changed` per kind and session. @default 50 */
  listChangedDebounceMs?: number;
  /**
   * Open sessions beyond this evict the longest-idle one, or are refused (503) when every
   * session is busy. @default 1000
   */
  maxSessions?: number;
  /** A session with no request (and no open stream) for this long is closed. @default 1800000 */
  sessionIdleMs?: number;
  /** This replica's id and the cluster's sealing key (issue #28); absent on a lone daemon. */
  cluster?: ClusterParts;
}

/**
 * `/mcp`: Switchboard's own MCP endpoint, both protocol eras on one URL (SPEC §9).
 *
 * - 2025-era clients (2025-03-26 … 2025-11-25) get sessions: a `POST` carrying `initialize` and no
 *   `Mcp-Session-Id` opens one (see `LegacySessions`); later requests carry the id; `DELETE` ends
 *   it; `notifications/tools/list_changed` (debounced) goes out on the session's GET stream.
 *   Refusals before a session is found are JSON-RPC error bodies (errors/jsonrpc-error.ts): 400
 *   `MCP_SESSION_REQUIRED` (no session id on a non-initialize request), 404
 *   `MCP_SESSION_NOT_FOUND` (unknown or ended session), 503 `TOO_MANY_MCP_SESSIONS`.
 * - 2026-07-28 clients are served statelessly by the SDK's handler: `server/discover`, the
 *   per-request `_meta` envelope, `Mcp-Method`/`Mcp-Name` checks, the revision's error codes
 *   (-32020/-32021/-32022), and `subscriptions/listen` for `tools/list_changed`.
 * The SDK's classifier tells them apart; a request carrying a session id is 2025-era by nature.
 *
 * Shutdown (`preClose`, before the HTTP server waits for its connections): the idle GET streams
 * end at once, calls in flight finish or are aborted by `shutdownSignal`, then every session
 * and listen stream closes, so an MCP client can never hold `app.close()` open.
 */
export const mcpRoutes: FastifyPluginAsync<McpRoutesOptions> = async (app, options) => {
  const { manager, runtime, shutdownSignal, gateway } = options;
  const { lists, continuations, relayStates, modes } = createServerParts(gateway, options.cluster);
  const posts = new PendingCount();
  let closing = false;

  const serverOptions = { manager, runtime, lists, modes, gateway, continuations, relayStates };
  const sessions = new LegacySessions({
    createServer: (onCancelled, session) => {
      relay.baseline(session);
      return createAgentServer({ ...serverOptions, session, onCancelled });
    },
    // A session that ends takes its resource subscriptions with it.
    onClosed: (session) => {
      for (const uri of session.subscriptions) void gateway.request({ method: 'resources/unsubscribe', uri }, unsubscribeOptions(session.agent)).catch(() => undefined);
      session.subscriptions.clear();
    },
    maxSessions: options.maxSessions ?? 1000,
    idleMs: options.sessionIdleMs ?? 30 * 60_000,
    ...(options.cluster ? { replicaId: options.cluster.replicaId } : {}),
  });
  const onerror = (err: Error): void => app.log.debug({ err: err.message }, 'mcp (2026-07-28) request failed');
  // A `Server` per request in flight, as the stateless era wants, reused once its exchange closed
  // (modern-servers.ts); the lists it serves are shared. Each handler reads the request's agent
  // from the request: the SDK's pass-through `authInfo`, set below as `req.auth` (request-agent.ts).
  const modernServers = new ModernServers(serverOptions);
  const modern = createMcpHandler(() => modernServers.take(), { legacy: 'reject', onerror });
  const serveModern = modernNodeHandler(modern, onerror);
  // Most 2026-07-28 requests skip the handler's web Request/Response: served on a pooled server
  // through a transport that writes Node's response (modern-direct.ts); the rest go to the handler.
  const direct = new ModernDirect(() => modernServers.take());
  const relay = new SessionRelay({
    manager,
    bus: options.bus,
    lists,
    sessions: () => sessions.entries(),
    modern: modern.notify,
    debounceMs: options.listChangedDebounceMs ?? 50,
    keptResultsChanged: (listener) => gateway.onKeptResultsChanged(listener),
    log: app.log as never,
  });

  const stop = async (): Promise<void> => {
    sessions.stop();
    await Promise.allSettled([sessions.closeAll(), modern.close(), direct.close()]);
  };

  app.addHook('preClose', async () => {
    sessions.stop();
    closing = true;
    for (const session of sessions.values()) session.transport.closeStandaloneSSEStream();
    // Until the posts in flight end or the grace runs out (the shutdown signal aborts).
    await waitFor(posts.drained(), { signal: shutdownSignal }).catch(() => undefined);
    // Calls just aborted by the grace still answer with an error; give them a moment to.
    await waitFor(posts.drained(), { deadlineMs: ABORTED_ANSWER_MS });
    await stop();
  });

  app.addHook('onClose', async () => {
    relay.close();
    continuations.abortAll(new SwitchboardError('SHUTTING_DOWN', 'Switchboard is shutting down; the call was cancelled'));
    await stop();
  });

  /** Hands the response to the SDK, keeping count of POSTs (what shutdown waits for). */
  const hijack = (request: FastifyRequest, reply: FastifyReply, session?: LegacySession): void => {
    reply.hijack();
    // Node's server.close() reaps only the connections idle at that moment; a response that ends
    // just after it (a stream of a session closed at the end of preClose) would otherwise keep
    // its socket for the whole keep-alive timeout.
    const socket = request.raw.socket;
    reply.raw.once('finish', () => {
      if (closing) socket.end();
    });
    // A POST's response ends once every answer in it is sent. (A GET stream, or the response to
    // a `subscriptions/listen`, never ends by itself: those are not counted.)
    if (request.method === 'POST' && !isListen(request.body)) {
      posts.add();
      reply.raw.once('close', () => posts.done());
    }
    if (session) sessions.serve(session, reply.raw);
  };

  const fail = (request: FastifyRequest, reply: FastifyReply, err: unknown): void => {
    request.log.error({ err: errorMessage(err) }, 'mcp request failed');
    if (!reply.raw.headersSent) {
      const { status, body } = jsonRpcRefusal(new SwitchboardError('INTERNAL_ERROR'));
      reply.raw.writeHead(status, { 'content-type': JSON_RPC_CONTENT_TYPE });
      reply.raw.end(body);
    } else if (!reply.raw.writableEnded) {
      reply.raw.end();
    }
  };

  const handle = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const sessionId = request.headers['mcp-session-id'];
    const route = typeof sessionId === 'string' ? undefined : directRoute({ method: request.method, headers: request.headers, body: request.body });
    if (route) {
      hijack(request, reply);
      try {
        await direct.serve(route, request.raw, reply.raw, request.agent ? authOf(request.agent) : undefined);
      } catch (err) {
        fail(request, reply, err);
      }
      return;
    }
    if (typeof sessionId !== 'string' && !isLegacy(request)) {
      hijack(request, reply);
      // A 2026-07-28 client subscribes to resource updates on its listen stream: the servers
      // owning those URIs are subscribed for as long as the stream is open.
      if (isListen(request.body)) holdSubscriptions(listenedUris(request.body), reply, request.agent);
      try {
        await serveModern(request.raw, reply.raw, request.body, request.agent ? authOf(request.agent) : undefined);
      } catch (err) {
        fail(request, reply, err);
      }
      return;
    }

    let session: LegacySession | undefined;
    let opened = false;
    if (typeof sessionId === 'string') {
      // Another key's session answers as an unknown one does; the agent's view is its current one.
      session = sessions.resume(sessionId, request.agent);
      // The SDK transport's own wording for the same refusals.
      if (!session) return void sendJsonRpcRefusal(reply, new SwitchboardError('MCP_SESSION_NOT_FOUND', 'Session not found'));
    } else if (request.method === 'POST' && isInitialize(request.body)) {
      if (!(await sessions.makeRoom())) return void sendJsonRpcRefusal(reply, new SwitchboardError('TOO_MANY_MCP_SESSIONS', 'Too many MCP sessions'));
      session = await sessions.open(request.agent);
      opened = true;
    } else {
      return void sendJsonRpcRefusal(reply, new SwitchboardError('MCP_SESSION_REQUIRED', 'Bad Request: Mcp-Session-Id header is required'));
    }

    // From here the SDK writes the response (JSON, or an SSE stream that outlives this handler).
    hijack(request, reply, session);
    // A POST's stream says nothing before its first event: a replica that dies first fails the call at once.
    if (request.method === 'POST') deferHeaders(reply.raw);
    try {
      await session.transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (err) {
      fail(request, reply, err);
    } finally {
      // An initialize the transport refused never became a session.
      if (opened && session.transport.sessionId === undefined) await session.server.close();
    }
  };

  const holdSubscriptions = (uris: string[], reply: FastifyReply, agent: AgentRef | undefined): void => {
    if (uris.length === 0) return;
    const held = Promise.all(
      uris.map((uri) =>
        gateway.request({ method: 'resources/subscribe', uri }, { transport: 'mcp', ...(agent ? { agent } : {}) }).then(
          () => uri,
          (err: unknown) => {
            app.log.debug({ uri, err: errorMessage(err) }, 'resource subscription not forwarded');
            return undefined;
          },
        ),
      ),
    );
    reply.raw.once('close', () => {
      void held.then((subscribed) => {
        for (const uri of subscribed) if (uri !== undefined) void gateway.request({ method: 'resources/unsubscribe', uri }, unsubscribeOptions(agent)).catch(() => undefined);
      });
    });
  };

  app.route({ method: ['GET', 'POST', 'DELETE'], url: '/mcp', handler: handle });
};

/** An unsubscribe takes the request path as every request does (in flight, metrics), for the agent that subscribed. */
function unsubscribeOptions(agent: AgentRef | undefined): RequestOptions {
  return { transport: 'mcp', ...(agent ? { agent } : {}) };
}

/** The URIs a `subscriptions/listen` request subscribes to. */
function listenedUris(body: unknown): string[] {
  const uris = (body as { params?: { notifications?: { resourceSubscriptions?: unknown } } }).params?.notifications?.resourceSubscriptions;
  return Array.isArray(uris) ? uris.filter((uri): uri is string => typeof uri === 'string') : [];
}

function isListen(body: unknown): boolean {
  return (body as { method?: unknown } | null)?.method === 'subscriptions/listen';
}

/** The SDK's `isInitializeRequest` (a zod parse) only for a body that names the method at all: every modern request asks. */
function isInitialize(body: unknown): boolean {
  return (body as { method?: unknown } | null)?.method === 'initialize' && isInitializeRequest(body);
}

/**
 * Whether a request without a session id is 2025-era: an `initialize` is, cheaply; a POST with no
 * JSON body goes the legacy way (as the SDK's `isLegacyRequest` sends it); anything else is the
 * SDK's classifier's call (the modern envelope claim, batches, body-less GET/DELETE). It is given
 * the facts it reads directly: building a web `Request` only to classify it cost a modern call
 * about a tenth of its CPU (issue #17).
 */
function isLegacy(request: FastifyRequest): boolean {
  if (request.method === 'POST' && isInitialize(request.body)) return true;
  if (request.method === 'POST' && request.body === undefined) return true;
  if (request.method === 'POST' && claimsEnvelope(request.body)) return false;
  const facts: InboundHttpRequest = { httpMethod: request.method };
  const protocolVersion = headerOf(request, 'mcp-protocol-version');
  const method = headerOf(request, 'mcp-method');
  const name = headerOf(request, 'mcp-name');
  if (protocolVersion !== undefined) facts.protocolVersionHeader = protocolVersion;
  if (method !== undefined) facts.mcpMethodHeader = method;
  if (name !== undefined) facts.mcpNameHeader = name;
  if (request.body !== undefined) facts.body = request.body;
  return classifyInboundRequest(facts).kind === 'legacy';
}

/**
 * A JSON-RPC request or notification (not `initialize`, not a response) whose `_meta` carries the
 * 2026-07-28 envelope's protocol-version key: the classifier never calls such a body 2025-era (it is
 * modern, or refused on the modern path), so the SDK's handler classifies it, once (issue #44),
 * rather than this route first and the handler again.
 */
function claimsEnvelope(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const message = body as { jsonrpc?: unknown; method?: unknown; params?: { _meta?: unknown } };
  if (message.jsonrpc !== '2.0' || typeof message.method !== 'string' || message.method === 'initialize' || 'result' in message || 'error' in message) return false;
  const meta = message.params?._meta;
  return meta !== null && typeof meta === 'object' && !Array.isArray(meta) && PROTOCOL_VERSION_META_KEY in meta;
}

/** A header's value as a web `Headers.get` would give it (repeats joined by ", "). */
function headerOf(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
