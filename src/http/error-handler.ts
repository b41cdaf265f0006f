import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SwitchboardError, type ErrorCode } from '../errors.js';
import { errorBody, httpError, sendError, toHttpError, type HttpError } from './errors/http-error.js';

/**
 * The app's handlers for what goes wrong: thrown errors, unknown routes, and requests Node's
 * parser refuses. The answers themselves are built by `errors/http-error.ts`; this file decides
 * what is logged, and how loudly.
 */

/**
 * 5xx answers that report a state, not a fault: `/ready` polled during startup, a drain, an
 * upstream that is down. The state change itself is logged once where it happens (the
 * manager's status transitions, the runtime's shutdown); logging it again per request would
 * bury the one line that matters, so these go to `debug`.
 */
const EXPECTED_UNAVAILABLE: ReadonlySet<ErrorCode> = new Set([
  'NOT_READY',
  'SHUTTING_DOWN',
  'SERVER_NOT_CONNECTED',
  'SERVER_CLOSED',
  'UPSTREAM_CONNECT_FAILED',
  'UPSTREAM_CONNECT_TIMEOUT',
  'TOOL_CALL_TIMEOUT',
]);

/**
 * The app's error handler: 5xx are logged at `error`, 4xx at `info` without a stack (they are
 * the caller's mistake, not ours), and the expected unavailable states above at `debug`.
 */
export function errorHandler(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(reply, logHttpError(err, request));
}

/**
 * Maps and logs an error as the error handler does; for answers that do not go through it (an
 * `error` event of a stream that has already started).
 */
export function logHttpError(err: unknown, request: FastifyRequest): HttpError {
  const error = toHttpError(err);
  if (EXPECTED_UNAVAILABLE.has(error.code)) request.log.debug({ code: error.code, status: error.status }, error.message);
  else if (error.status < 500) request.log.info({ code: error.code, status: error.status }, error.message);
  // Our own codes are expected conditions (shutdown, upstream down): the code says it all. Only
  // an unexpected error earns its stack.
  else if (err instanceof SwitchboardError) request.log.error({ code: error.code, status: error.status }, error.message);
  else request.log.error({ err, code: error.code, status: error.status }, error.message);
  return error;
}

/** Unknown routes: 404 `ROUTE_NOT_FOUND` in the same shape as every other error. */
export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(reply, httpError('ROUTE_NOT_FOUND', `No route ${request.method} ${pathOf(request.url)}`));
}

/** The path without its query string (which may carry `?token=`). */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * Requests Node's HTTP parser rejects before fastify sees them (bad framing, oversized headers,
 * header timeout) still get the `{ error }` shape, as a 400 on a closing connection.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection is already gone; there is nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const message = err.code === 'HPE_HEADER_OVERFLOW' ? 'headers: Too large' : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request: Not received in time' : 'request: Malformed HTTP';
  const error = httpError('VALIDATION_FAILED', message);
  const body = JSON.stringify(errorBody(error.code, error.message));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
