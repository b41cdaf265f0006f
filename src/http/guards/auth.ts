import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { httpError, sendError } from '../errors/http-error.js';

export interface AuthOptions {
  /** The bearer token every protected route requires. */
  token: string;
  /**
   * Routes (as registered, e.g. `/health`) served without a token.
   * @default ["/health"]
   */
  publicRoutes?: readonly string[];
  /**
   * Routes that also accept the token as `?token=`: browsers cannot set headers on a
   * WebSocket handshake.
   * @default ["/events"]
   */
  queryTokenRoutes?: readonly string[];
}

type OnRequestHook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

const UNAUTHORIZED = httpError('UNAUTHORIZED');

/**
 * The bearer check, as an `onRequest` hook registered before every route (including `/events`
 * and `/mcp`) and the 404 handler, so unknown paths do not reveal which routes exist.
 */
export function createAuthHook(options: AuthOptions): OnRequestHook {
  // Comparing fixed-size digests keeps `timingSafeEqual` happy with any presented length and
  // leaks nothing about the token's length through timing.
  const expected = digest(options.token);
  const publicRoutes = new Set(options.publicRoutes ?? ['/health']);
  const queryTokenRoutes = new Set(options.queryTokenRoutes ?? ['/events']);

  return function authenticate(request, reply, done) {
    const route = request.routeOptions.url;
    if (route !== undefined && publicRoutes.has(route)) return done();
    const presented = bearerOf(request) ?? (route !== undefined && queryTokenRoutes.has(route) ? queryTokenOf(request) : undefined);
    if (presented !== undefined && timingSafeEqual(digest(presented), expected)) return done();
    void sendError(reply.header('www-authenticate', 'Bearer'), UNAUTHORIZED);
  };
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

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
