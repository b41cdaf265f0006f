import { isSwitchboardError } from '../../errors.js';
import { isStepUpRefusal } from '../oauth/auth-errors.js';
import { httpStatusOf } from '../transport/transports.js';

/**
 * What a failed request says about the connection it used. The supervision (upstream.ts) and
 * the request loop (upstream-request.ts) decide on this alone — reconnect or not, replay or not — so the
 * SDK's error types are read in this one place and nowhere else.
 *
 * - `session-expired`: HTTP 404 on a request carrying a session id: the server forgot the session
 *   (it restarted). The request was not processed.
 * - `unreachable`: no connection could be opened (refused, no route, no such host). The request
 *   never left.
 * - `connection-lost`: the connection broke while the request was out (reset, process died). It
 *   may or may not have been processed.
 * - `auth-required`: the server refused our credentials and a person must sign in (issue #16).
 *   The request was not processed; nothing is retried until then.
 * - `auth-failed`: the server keeps asking for scope that signing in does not bring (issue #29);
 *   the request was not processed, and signing in again would not help: the server fails.
 * - `other`: anything else, e.g. a JSON-RPC error the server answered with: the connection is fine.
 */
export type FailureKind = 'session-expired' | 'unreachable' | 'connection-lost' | 'auth-required' | 'auth-failed' | 'other';

const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);
const LOST_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_PREMATURE_CLOSE']);

export function classifyFailure(err: unknown): FailureKind {
  // A server restarted at once on its port: the old session's streams end, the connection closes,
  // and the request's 404 from the new server arrives wrapped in that close. Still a refusal.
  if (isSwitchboardError(err, 'SERVER_CLOSED')) return httpStatusOf(err.cause) === 404 ? 'session-expired' : 'connection-lost';
  if (isSwitchboardError(err, 'UPSTREAM_AUTH_REQUIRED')) return 'auth-required';
  if (isStepUpRefusal(err)) return 'auth-failed';
  if (httpStatusOf(err) === 404) return 'session-expired';
  const code = systemCodeOf(err);
  if (code !== undefined && UNREACHABLE_CODES.has(code)) return 'unreachable';
  if (code !== undefined && LOST_CODES.has(code)) return 'connection-lost';
  // undici reports a connection it could not make, or lost, as `TypeError: fetch failed` with the
  // socket error as its cause; without a cause code we cannot tell whether the request went out.
  if (err instanceof TypeError && err.message === 'fetch failed') return 'connection-lost';
  return 'other';
}

/** Whether the failed request can have reached the server (and so may have had an effect). */
export function mayHaveBeenDelivered(kind: FailureKind): boolean {
  return kind !== 'session-expired' && kind !== 'unreachable' && kind !== 'auth-required' && kind !== 'auth-failed';
}

/**
 * Whether the failure means the connection is gone and must be replaced. Not on `auth-required`:
 * the upstream drops that connection itself and waits for a sign-in instead of reconnecting.
 */
export function meansConnectionLost(kind: FailureKind): boolean {
  return kind !== 'other' && kind !== 'auth-required' && kind !== 'auth-failed';
}

/** The errno-style code of an error or of the errors that caused it (undici nests them). */
function systemCodeOf(err: unknown): string | undefined {
  for (let current = err, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
