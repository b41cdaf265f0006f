import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ZodError } from 'zod';
import { ERROR_CATALOGUE, SwitchboardError, type ErrorCode } from '../errors.js';

/**
 * Every error the HTTP API answers with goes through here, so the wire shape is always
 * `{ error: { code, message } }` with the catalogue's status — never fastify's default body,
 * HTML or a stack trace.
 */

export interface ErrorBody {
  error: { code: ErrorCode; message: string };
}

export interface HttpError {
  status: number;
  code: ErrorCode;
  message: string;
}

export function errorBody(code: ErrorCode, message: string = ERROR_CATALOGUE[code].message): ErrorBody {
  return { error: { code, message } };
}

/** Maps any thrown value to a catalogue code. Unknown errors never leak their message. */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof SwitchboardError) return { status: err.status, code: err.code, message: err.message };
  if (err instanceof ZodError) {
    const issue = err.issues[0];
    const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : 'body';
    return fromCode('VALIDATION_FAILED', `${field}: ${issue?.message ?? 'Invalid input'}`);
  }
  const fastifyError = err as Partial<FastifyError> | null;
  switch (fastifyError?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return fromCode('PAYLOAD_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return fromCode('UNSUPPORTED_MEDIA_TYPE');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return fromCode('VALIDATION_FAILED', 'body: Not valid JSON');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return fromCode('VALIDATION_FAILED', 'body: Size does not match Content-Length');
    case 'FST_ERR_BAD_URL':
      return fromCode('VALIDATION_FAILED', 'url: Not a valid URL component');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return fromCode('VALIDATION_FAILED', 'params: Too long');
  }
  const status = fastifyError?.statusCode;
  // Any other client error fastify raises (bad framing, proto poisoning, …) is bad input.
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return fromCode('VALIDATION_FAILED', fastifyError?.message || undefined);
  }
  return fromCode('INTERNAL_ERROR');
}

function fromCode(code: ErrorCode, message?: string): HttpError {
  const entry = ERROR_CATALOGUE[code];
  return { status: entry.status, code, message: message ?? entry.message };
}

/** Sends an error in the wire shape; used by the error handler and by the auth/shutdown hooks. */
export function sendError(reply: FastifyReply, error: HttpError): FastifyReply {
  return reply.code(error.status).type('application/json; charset=utf-8').send(errorBody(error.code, error.message));
}

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
  return sendError(reply, fromCode('ROUTE_NOT_FOUND', `No route ${request.method} ${pathOf(request.url)}`));
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
  const message =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? 'headers: Too large'
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'request: Not received in time'
        : 'request: Malformed HTTP';
  const body = JSON.stringify(errorBody('VALIDATION_FAILED', message));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
