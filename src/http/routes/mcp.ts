import { randomUUID } from 'node:crypto';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { isInitializeRequest } from '@modelcontextprotocol/server';
import type { Server } from '@modelcontextprotocol/server';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { errorMessage } from '../../errors.js';
import type { MCPManager } from '../../mcp/manager.js';
import type { SwitchboardRuntime } from '../../runtime.js';
import { deferred, type Deferred } from '../../util/deferred.js';
import { delay } from '../../util/delay.js';
import { InFlightCalls } from '../in-flight-calls.js';
import { createToolServer, McpToolList } from '../mcp/tool-server.js';

export interface McpRoutesOptions {
  manager: Pick<MCPManager, 'getCatalogue' | 'callTool' | 'subscribe' | 'identity' | 'instanceAd'>;
  runtime: Pick<SwitchboardRuntime, 'state' | 'whenReady'>;
  /** Aborted when shutdown's grace runs out: in-flight `/mcp` calls are cancelled then. */
  shutdownSignal: AbortSignal;
  /** Tool changes closer together than this produce one `list_changed` per session. @default 50 */
  listChangedDebounceMs?: number;
  /**
   * Open sessions beyond this evict the longest-idle one, or are refused (503) when every
   * session is busy. @default 1000
   */
  maxSessions?: number;
  /** A session with no request (and no open stream) for this long is closed. @default 1800000 */
  sessionIdleMs?: number;
}

interface Session {
  transport: NodeStreamableHTTPServerTransport;
  server: Server;
  /** Requests (and GET streams) open right now; a session with none is idle. */
  active: number;
  /** When the last request started or ended (performance.now(), ms). */
  lastSeen: number;
}

/** JSON-RPC "server error" codes the SDK transport uses for the same situations. */
const SESSION_NOT_FOUND = -32001;
const BAD_REQUEST = -32000;
const INTERNAL_ERROR = -32603;
/** How long calls aborted at the end of shutdown's grace get to send their error answer. */
const ABORTED_ANSWER_MS = 250;

/**
 * `/mcp`: Switchboard's own MCP endpoint (Streamable HTTP, stateful). A `POST` carrying an
 * `initialize` request and no `Mcp-Session-Id` opens a session (one SDK transport + one
 * `Server`, see `createToolServer`); every later request carries the id; `DELETE` ends the
 * session. Refusals before a session is found are JSON-RPC error bodies, as MCP clients expect:
 * 400 (no session id on a non-initialize request), 404 (unknown or ended session), 503 (more than
 * `maxSessions`). Every session gets `notifications/tools/list_changed` (debounced) when the
 * catalogue changes; it is delivered on the session's GET stream, when the client has one open.
 *
 * Shutdown (`preClose`, before the HTTP server waits for its connections): the idle GET streams
 * end at once, calls in flight finish or are aborted by `shutdownSignal`, then every session
 * closes, so an MCP client can never hold `app.close()` open.
 */
export const mcpRoutes: FastifyPluginAsync<McpRoutesOptions> = async (app, options) => {
  const { manager, runtime, shutdownSignal } = options;
  const debounceMs = options.listChangedDebounceMs ?? 50;
  const maxSessions = options.maxSessions ?? 1000;
  const sessionIdleMs = options.sessionIdleMs ?? 30 * 60_000;
  const sessions = new Map<string, Session>();
  const tools = new McpToolList(manager);
  const calls = new InFlightCalls(shutdownSignal);
  const posts = new PendingCount();
  let closing = false;

  let listChangedTimer: NodeJS.Timeout | undefined;
  const broadcastListChanged = (): void => {
    listChangedTimer = undefined;
    for (const [id, session] of sessions) {
      session.server.sendToolListChanged().catch((err: unknown) => {
        app.log.debug({ session: id, err: errorMessage(err) }, 'list_changed not delivered');
      });
    }
  };
  const unsubscribe = manager.subscribe((event) => {
    if (event.type !== 'tools.changed' || listChangedTimer) return;
    listChangedTimer = setTimeout(broadcastListChanged, debounceMs);
    listChangedTimer.unref();
  });

  const openSession = async (): Promise<Session> => {
    const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        sessions.set(id, session);
      },
    });
    const server = createToolServer({
      manager,
      runtime,
      tools,
      calls,
      onCancelled: (requestId) => transport.closeSSEStream(requestId),
    });
    const session: Session = { transport, server, active: 0, lastSeen: performance.now() };
    // Fires for DELETE, for close on shutdown and for a transport error alike.
    server.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined && sessions.get(id) === session) sessions.delete(id);
    };
    await server.connect(transport);
    return session;
  };

  const closeSessions = async (): Promise<void> => {
    const open = [...sessions.values()];
    sessions.clear();
    await Promise.allSettled(open.map((session) => session.server.close()));
  };

  // Agents that exit without DELETE leave sessions behind; idle ones are reaped, so abandoned
  // sessions can never fill the table and lock everyone else out.
  const idleSessions = (): Session[] =>
    [...sessions.values()].filter((s) => s.active === 0).sort((a, b) => a.lastSeen - b.lastSeen);
  const reapIdle = (): void => {
    const cutoff = performance.now() - sessionIdleMs;
    for (const session of idleSessions()) if (session.lastSeen <= cutoff) void session.server.close();
  };
  const reaper = setInterval(reapIdle, Math.min(sessionIdleMs, 60_000));
  reaper.unref();

  app.addHook('preClose', async () => {
    clearInterval(reaper);
    closing = true;
    for (const session of sessions.values()) session.transport.closeStandaloneSSEStream();
    await Promise.race([posts.drained(), whenAborted(shutdownSignal)]);
    // Calls just aborted by the grace still answer with an error; give them a moment to.
    await Promise.race([posts.drained(), delay(ABORTED_ANSWER_MS)]);
    await closeSessions();
  });

  app.addHook('onClose', async () => {
    clearInterval(reaper);
    unsubscribe();
    clearTimeout(listChangedTimer);
    await closeSessions();
  });

  const handle = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const sessionId = request.headers['mcp-session-id'];
    let session: Session | undefined;
    let opened = false;
    if (typeof sessionId === 'string') {
      session = sessions.get(sessionId);
      if (!session) return sendRpcError(reply, 404, SESSION_NOT_FOUND, 'Session not found');
    } else if (request.method === 'POST' && isInitializeRequest(request.body)) {
      if (sessions.size >= maxSessions) {
        const oldest = idleSessions()[0];
        if (!oldest) return sendRpcError(reply, 503, BAD_REQUEST, 'Too many MCP sessions');
        await oldest.server.close();
      }
      session = await openSession();
      opened = true;
    } else {
      return sendRpcError(reply, 400, BAD_REQUEST, 'Bad Request: Mcp-Session-Id header is required');
    }

    // From here the SDK writes the response (JSON, or an SSE stream that outlives this handler).
    reply.hijack();
    // Node's server.close() reaps only the connections idle at that moment; a response that ends
    // just after it (a stream of a session closed at the end of preClose) would otherwise keep
    // its socket for the whole keep-alive timeout.
    const socket = request.raw.socket;
    reply.raw.once('finish', () => {
      if (closing) socket.end();
    });
    // A POST's response ends once every answer in it is sent: that is what shutdown waits for.
    // (The GET stream never ends by itself, so it is not counted.)
    const counted = request.method === 'POST';
    if (counted) posts.add();
    const current = session;
    current.active += 1;
    current.lastSeen = performance.now();
    reply.raw.once('close', () => {
      current.active -= 1;
      current.lastSeen = performance.now();
    });
    try {
      await session.transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (err) {
      request.log.error({ err: errorMessage(err) }, 'mcp request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(rpcError(INTERNAL_ERROR, 'Internal error'));
      } else if (!reply.raw.writableEnded) {
        reply.raw.end();
      }
    } finally {
      if (counted) posts.done();
      // An initialize the transport refused never became a session.
      if (opened && session.transport.sessionId === undefined) await session.server.close();
    }
  };

  app.route({ method: ['GET', 'POST', 'DELETE'], url: '/mcp', handler: handle });
};

/** How many things are pending, and a promise for when that reaches zero. */
class PendingCount {
  private count = 0;
  private idle: Deferred<void> | undefined;

  add(): void {
    this.count += 1;
  }

  done(): void {
    this.count -= 1;
    if (this.count > 0) return;
    this.idle?.resolve();
    this.idle = undefined;
  }

  drained(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    this.idle ??= deferred();
    return this.idle.promise;
  }
}

function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

function rpcError(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
}

async function sendRpcError(reply: FastifyReply, status: number, code: number, message: string): Promise<void> {
  await reply.code(status).type('application/json').send(rpcError(code, message));
}
