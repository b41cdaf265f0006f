import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { ErrorCode } from '../../errors.js';
import type { AgentRef, Authentication } from '../../gateway/index.js';
import { httpError, sendError } from '../errors/http-error.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The agent whose key or JWT the request carried (issues #22, #40); unset for the operator and without keys. */
    agent?: AgentRef;
  }
}

/** What the guard needs of the gateway. */
export interface KeyCheck {
  /** Whether any key exists (a `token`, or an agent): without one, loopback trust as before. */
  readonly keysRequired: boolean;
  readonly isLoaded: boolean;
  readonly loaded: Promise<void>;
  authenticate(presented: string): Authentication | Promise<Authentication>;
  /** Changes whenever who a key is may have changed: a verdict kept from before is stale. */
  readonly authGeneration: number;
  /** Whether an agent authenticated earlier may still act (not expired since). */
  isActive(agent: AgentRef): boolean;
}

export interface AuthOptions {
  keys: KeyCheck;
  /**
   * Routes (as registered, e.g. `/health`) served without a key.
   * @default ["/health"]
   */
  publicRoutes?: readonly string[];
  /** Routes an agent key reaches; every other route is the operator's (403 `FORBIDDEN` to agents). @default AGENT_ROUTES */
  agentRoutes?: readonly string[];
  /**
   * Routes that also accept the key as `?token=`, or inside the WebSocket subprotocol list
   * (`switchboard.bearer.<base64url key>`, see `EVENTS_SUBPROTOCOL`): browsers cannot set headers
   * on a WebSocket handshake, and the dashboard keeps its key out of URLs (they reach logs and
   * history).
   * @default ["/events"]
   */
  queryTokenRoutes?: readonly string[];
}

/** The routes of agents (SPEC §12): the catalogue, calls, `/mcp`, the feed and a scoped `/status`. */
export const AGENT_ROUTES: readonly string[] = [
  '/tools',
  '/tools/search',
  '/tools/:name',
  '/tools/:name/call',
  '/prompts',
  '/prompts/:name/get',
  '/resources',
  '/resources/read',
  '/results/:handle',
  '/scripts/run',
  '/mcp',
  '/events',
  '/status',
];

/**
 * The subprotocol a browser offers on `/events` beside its key (Kubernetes does the same):
 * `new WebSocket(url, [EVENTS_SUBPROTOCOL, BEARER_PROTOCOL_PREFIX + base64url(key)])`. The
 * daemon answers with `EVENTS_SUBPROTOCOL`, never echoing the key.
 */
export const EVENTS_SUBPROTOCOL = 'switchboard.events';
export const BEARER_PROTOCOL_PREFIX = 'switchboard.bearer.';

type OnRequestHook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

const REFUSED: Readonly<Record<Exclude<Authentication['kind'], 'operator' | 'agent' | 'refused'>, ErrorCode>> = {
  unknown: 'UNAUTHORIZED',
  expired: 'KEY_EXPIRED',
  revoked: 'KEY_REVOKED',
};

/**
 * The key check, as an `onRequest` hook registered before every route (including `/events`
 * and `/mcp`) and the 404 handler, so unknown paths do not reveal which routes exist. The
 * operator key (the config's `token`) opens every route; an agent key only the agent routes, and
 * puts the agent on `request.agent`. No key at all while none exists: loopback trust, as before.
 */
export function createAuthHook(options: AuthOptions): OnRequestHook {
  const { keys } = options;
  const publicRoutes = new Set(options.publicRoutes ?? ['/health']);
  const agentRoutes = new Set(options.agentRoutes ?? AGENT_ROUTES);
  const queryTokenRoutes = new Set(options.queryTokenRoutes ?? ['/events']);
  // A keep-alive connection presents the same key on each request: its last accepted verdict
  // stays with its socket (issue #44 item 4) while the registry's generation is the same — any
  // key issued or revoked changes it at once — and, for an agent, while the agent may still act
  // (expiry). A JWT's verdict (asynchronous) and a refusal are never kept.
  const bySocket = new WeakMap<Socket, KeptVerdict>();

  const check = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const route = request.routeOptions.url;
    if (!keys.keysRequired || (route !== undefined && publicRoutes.has(route))) return done();
    const presented = bearerOf(request) ?? (route !== undefined && queryTokenRoutes.has(route) ? (protocolTokenOf(request) ?? queryTokenOf(request)) : undefined);
    const socket = request.raw.socket;
    const kept = bySocket.get(socket);
    if (kept !== undefined && kept.presented === presented && kept.generation === keys.authGeneration && (kept.verdict.kind === 'operator' || keys.isActive(kept.verdict.agent))) {
      return apply(kept.verdict, route, request, reply, done);
    }
    const generation = keys.authGeneration;
    const verdict = presented === undefined ? ({ kind: 'unknown' } as const) : keys.authenticate(presented);
    // A JWT's keys may need fetching; keys and the operator's token answer at once.
    if (verdict instanceof Promise) {
      verdict.then(
        (settled) => apply(settled, route, request, reply, done),
        () => void sendError(reply, httpError('INTERNAL_ERROR')),
      );
      return;
    }
    if (presented !== undefined && (verdict.kind === 'operator' || verdict.kind === 'agent')) bySocket.set(socket, { presented, generation, verdict });
    apply(verdict, route, request, reply, done);
  };

  const apply = (verdict: Authentication, route: string | undefined, request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    if (verdict.kind === 'operator') return done();
    if (verdict.kind === 'agent') {
      // An unknown path (no route) goes on to the 404 it would get anyway.
      if (route !== undefined && !agentRoutes.has(route)) return void sendError(reply, httpError('FORBIDDEN'));
      request.agent = verdict.agent;
      return done();
    }
    const error = httpError(verdict.kind === 'refused' ? verdict.code : REFUSED[verdict.kind]);
    void sendError(error.status === 401 ? reply.header('www-authenticate', 'Bearer') : reply, error);
  };

  return function authenticate(request, reply, done) {
    // Until stored agents are read, nobody can tell whether keys are needed: wait (once, at start).
    if (keys.isLoaded) return check(request, reply, done);
    void keys.loaded.then(() => check(request, reply, done));
  };
}

/** A connection's last accepted key and who it was, as of the registry's generation then. */
interface KeptVerdict {
  presented: string;
  generation: number;
  verdict: Extract<Authentication, { kind: 'operator' | 'agent' }>;
}

function bearerOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  return BEARER.exec(header)?.[1];
}

function queryTokenOf(request: FastifyRequest): string | undefined {
  const token = (request.query as Record<string, unknown> | undefined)?.token;
  return typeof token === 'string' && token.length > 0 ? token : undefined;
}

function protocolTokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers['sec-websocket-protocol'];
  if (typeof header !== 'string') return undefined;
  for (const offered of header.split(',')) {
    const value = offered.trim();
    if (!value.startsWith(BEARER_PROTOCOL_PREFIX)) continue;
    const token = Buffer.from(value.slice(BEARER_PROTOCOL_PREFIX.length), 'base64url').toString('utf8');
    return token.length > 0 ? token : undefined;
  }
  return undefined;
}
