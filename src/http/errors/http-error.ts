import type { FastifyError, FastifyReply } from 'fastify';
import { ZodError } from 'zod';
import { ERROR_CATALOGUE, SwitchboardError, type ErrorCode } from '../../errors.js';

/**
 * The one mapping from an error to an HTTP answer: the catalogue's status and the wire shape
 * `{ error: { code, message } }` — never fastify's default body, HTML or a stack trace. The
 * error handler, the guards, streamed calls and the raw parser-error answer all go through here.
 */

export interface ErrorBody {
  error: { code: ErrorCode; message: string; suggestions?: readonly string[] };
}

export interface HttpError {
  status: number;
  code: ErrorCode;
  message: string;
  /** Whole seconds for `Retry-After` (a rate limit, a busy agent). */
  retryAfter?: number;
  /** The names nearest to one that matched nothing ("did you mean …?"). */
  suggestions?: readonly string[];
}

/** A catalogue code as an HTTP answer, with its default message unless one is given. */
export function httpError(code: ErrorCode, message?: string): HttpError {
  const entry = ERROR_CATALOGUE[code];
  return { status: entry.status, code, message: message ?? entry.message };
}

export function errorBody(code: ErrorCode, message: string = ERROR_CATALOGUE[code].message, suggestions?: readonly string[]): ErrorBody {
  return { error: { code, message, ...(suggestions && suggestions.length > 0 ? { suggestions } : {}) } };
}

/** Maps any thrown value to a catalogue code. Unknown errors never leak their message. */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof SwitchboardError) {
    const error = httpError(err.code, err.message);
    if (err.retryAfterMs !== undefined) error.retryAfter = Math.max(1, Math.ceil(err.retryAfterMs / 1000));
    if (err.suggestions !== undefined) error.suggestions = err.suggestions;
    return error;
  }
  if (err instanceof ZodError) {
    const issue = err.issues[0];
    const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : 'body';
    return httpError('VALIDATION_FAILED', `${field}: ${issue?.message ?? 'Invalid input'}`);
  }
  const fastifyError = err as Partial<FastifyError> | null;
  switch (fastifyError?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return httpError('PAYLOAD_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return httpError('UNSUPPORTED_MEDIA_TYPE');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return httpError('VALIDATION_FAILED', 'body: Not valid JSON');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return httpError('VALIDATION_FAILED', 'body: Size does not match Content-Length');
    case 'FST_ERR_BAD_URL':
      return httpError('VALIDATION_FAILED', 'url: Not a valid URL component');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return httpError('VALIDATION_FAILED', 'params: Too long');
  }
  const status = fastifyError?.statusCode;
  // Any other client error fastify raises (bad framing, proto poisoning, …) is bad input.
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return httpError('VALIDATION_FAILED', fastifyError?.message || undefined);
  }
  return httpError('INTERNAL_ERROR');
}

/** Sends an error in the wire shape; used by the error handler and by the auth/host hooks. */
export function sendError(reply: FastifyReply, error: HttpError): FastifyReply {
  if (error.retryAfter !== undefined) void reply.header('retry-after', String(error.retryAfter));
  return reply
    .code(error.status)
    .type('application/json; charset=utf-8')
    .send(errorBody(error.code, error.message, error.suggestions));
}
