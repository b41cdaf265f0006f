import type { FastifyReply } from 'fastify';
import { ERROR_CATALOGUE, errorMessage, isSwitchboardError, type ErrorCode, type ErrorInfo } from '../../errors.js';
// The errors come from the client package (upstream/sdk.ts), which the `/mcp` route loads with
// itself; the guards refuse `/mcp` requests through this module with the codes alone, before
// either package is loaded. The server reads a thrown error's `code` and `data` as they are,
// whichever package built it.
import { sdk } from '../../upstream/sdk.js';
import { PROTOCOL_ERROR_CODES as ProtocolErrorCode } from './protocol-codes.js';

/**
 * The one mapping from our errors to JSON-RPC, for `/mcp` (SPEC §7, §9): every catalogue code has
 * a JSON-RPC code, and travels itself in `error.data.code` so that an agent can branch on it as a
 * REST client does.
 */

/** The SDK transport's code for an HTTP request it refuses as such (JSON-RPC "server error" range). */
const REQUEST_REFUSED = -32000;
/** The SDK transport's code for an unknown `Mcp-Session-Id`; a client initializes again on it. */
const SESSION_NOT_FOUND = -32001;

/**
 * Typed over every `ErrorCode`, so a new code does not compile without its JSON-RPC code.
 *
 * - `InvalidParams` (-32602): the request names something that is not there, or is malformed —
 *   what the MCP spec asks for an unknown tool, prompt or resource.
 * - -32001 / -32000: the HTTP request itself is refused before any JSON-RPC request is read (the
 *   codes the SDK's Streamable HTTP transport uses for the same situations).
 * - `InternalError` (-32603): the request was fine; serving it failed (an upstream, a deadline,
 *   shutdown, …).
 */
export const JSON_RPC_CODES: Readonly<Record<ErrorCode, number>> = {
  VALIDATION_FAILED: ProtocolErrorCode.InvalidParams,
  TOOL_NOT_FOUND: ProtocolErrorCode.InvalidParams,
  TOOL_CHANGED: ProtocolErrorCode.InvalidParams,
  PROMPT_NOT_FOUND: ProtocolErrorCode.InvalidParams,
  RESOURCE_NOT_FOUND: ProtocolErrorCode.InvalidParams,
  RESULT_NOT_FOUND: ProtocolErrorCode.InvalidParams,
  RESULT_EXPIRED: ProtocolErrorCode.InvalidParams,
  TASK_NOT_FOUND: ProtocolErrorCode.InvalidParams,
  TASK_CANCELLED: ProtocolErrorCode.InvalidParams,
  // The 2025-11-25 spec: a `required` task tool called without `params.task` is -32601.
  TASK_REQUIRED: ProtocolErrorCode.MethodNotFound,
  TASKS_NOT_NEGOTIATED: ProtocolErrorCode.MissingRequiredClientCapability,
  OAUTH_STATE_INVALID: ProtocolErrorCode.InvalidParams,

  MCP_SESSION_NOT_FOUND: SESSION_NOT_FOUND,
  MCP_SESSION_REQUIRED: REQUEST_REFUSED,
  TOO_MANY_MCP_SESSIONS: REQUEST_REFUSED,
  UNAUTHORIZED: REQUEST_REFUSED,
  KEY_EXPIRED: REQUEST_REFUSED,
  KEY_REVOKED: REQUEST_REFUSED,
  JWT_MALFORMED: REQUEST_REFUSED,
  JWT_ALGORITHM_REFUSED: REQUEST_REFUSED,
  JWT_KEY_UNKNOWN: REQUEST_REFUSED,
  JWT_SIGNATURE_INVALID: REQUEST_REFUSED,
  JWT_EXPIRED: REQUEST_REFUSED,
  JWT_NOT_YET_VALID: REQUEST_REFUSED,
  JWT_ISSUER_INVALID: REQUEST_REFUSED,
  JWT_AUDIENCE_INVALID: REQUEST_REFUSED,
  JWT_AGENT_INVALID: REQUEST_REFUSED,
  JWKS_UNAVAILABLE: REQUEST_REFUSED,
  FORBIDDEN: REQUEST_REFUSED,
  FORBIDDEN_HOST: REQUEST_REFUSED,
  FORBIDDEN_ORIGIN: REQUEST_REFUSED,
  ROUTE_NOT_FOUND: REQUEST_REFUSED,
  PAYLOAD_TOO_LARGE: REQUEST_REFUSED,
  UNSUPPORTED_MEDIA_TYPE: REQUEST_REFUSED,
  UPGRADE_REQUIRED: REQUEST_REFUSED,

  SERVER_NOT_FOUND: ProtocolErrorCode.InternalError,
  AGENT_NOT_FOUND: ProtocolErrorCode.InternalError,
  AGENT_EXISTS: ProtocolErrorCode.InternalError,
  AGENT_IN_CONFIG: ProtocolErrorCode.InternalError,
  OAUTH_NOT_APPLICABLE: ProtocolErrorCode.InternalError,
  INTERNAL_ERROR: ProtocolErrorCode.InternalError,
  DISCOVERY_FAILED: ProtocolErrorCode.InternalError,
  CONFIG_INVALID: ProtocolErrorCode.InternalError,
  UPSTREAM_CONNECT_FAILED: ProtocolErrorCode.InternalError,
  UPSTREAM_ERROR: ProtocolErrorCode.InternalError,
  UPSTREAM_PROTOCOL_ERROR: ProtocolErrorCode.InternalError,
  UPSTREAM_MESSAGE_TOO_LARGE: ProtocolErrorCode.InternalError,
  UPSTREAM_SESSION_EXPIRED: ProtocolErrorCode.InternalError,
  UPSTREAM_AUTH_FAILED: ProtocolErrorCode.InternalError,
  UPSTREAM_AUTH_REQUIRED: ProtocolErrorCode.InternalError,
  CALL_OUTCOME_UNKNOWN: ProtocolErrorCode.InternalError,
  SERVER_NOT_CONNECTED: ProtocolErrorCode.InternalError,
  SERVER_CLOSED: ProtocolErrorCode.InternalError,
  SERVER_SUSPENDED: ProtocolErrorCode.InternalError,
  SANDBOX_UNAVAILABLE: ProtocolErrorCode.InternalError,
  NOT_READY: ProtocolErrorCode.InternalError,
  SHUTTING_DOWN: ProtocolErrorCode.InternalError,
  UPSTREAM_CONNECT_TIMEOUT: ProtocolErrorCode.InternalError,
  UPSTREAM_PING_TIMEOUT: ProtocolErrorCode.InternalError,
  UPSTREAM_TIMEOUT: ProtocolErrorCode.InternalError,
  TOOL_CALL_TIMEOUT: ProtocolErrorCode.InternalError,
  APPROVAL_DENIED: ProtocolErrorCode.InternalError,
  POLICY_DENIED: ProtocolErrorCode.InternalError,
  APPROVAL_TIMEOUT: ProtocolErrorCode.InternalError,
  APPROVAL_NOT_FOUND: ProtocolErrorCode.InternalError,
  APPROVAL_PENDING: ProtocolErrorCode.InternalError,
  LOOP_DETECTED: ProtocolErrorCode.InternalError,
  AGENT_RATE_LIMITED: ProtocolErrorCode.InternalError,
  AGENT_BUSY: ProtocolErrorCode.InternalError,
  BUDGET_EXCEEDED: ProtocolErrorCode.InternalError,
  SERVER_BUSY: ProtocolErrorCode.InternalError,
  APPROVALS_FULL: ProtocolErrorCode.InternalError,
  // Code mode (issue #39): a script's own failure is an isError result; these reach JSON-RPC only as refusals.
  CODE_MODE_DISABLED: ProtocolErrorCode.InvalidParams,
  SCRIPT_ERROR: ProtocolErrorCode.InternalError,
  SCRIPT_TIMEOUT: ProtocolErrorCode.InternalError,
  SCRIPT_MEMORY_LIMIT: ProtocolErrorCode.InternalError,
  SCRIPT_OUTPUT_TOO_LARGE: ProtocolErrorCode.InternalError,
  SCRIPT_CALL_LIMIT: ProtocolErrorCode.InternalError,
};

/**
 * A failure answering a request on `/mcp` (tools/call, prompts/get, resources/read, …), as the
 * error the SDK sends back. A server's own protocol error passes as it was (code, message, data).
 * An unknown resource URI keeps the SDK's shape for it (`data.uri`, which clients recognise).
 * A caller's abort stays an abort: nobody reads an answer to it.
 */
export function toJsonRpcError(err: unknown, uri?: string): unknown {
  const { ProtocolError, ResourceNotFoundError } = sdk();
  if (ProtocolError.isInstance(err)) return new ProtocolError(err.code, err.message, err.data);
  if (isSwitchboardError(err)) {
    if (err.code === 'RESOURCE_NOT_FOUND' && uri !== undefined) return new ResourceNotFoundError(uri, err.message);
    const data = {
      code: err.code,
      ...(err.retryAfterMs === undefined ? {} : { retryAfterMs: err.retryAfterMs }),
      // The nearest names in the caller's view, as REST's body has them ("did you mean").
      ...(err.suggestions && err.suggestions.length > 0 ? { suggestions: err.suggestions } : {}),
    };
    return new ProtocolError(JSON_RPC_CODES[err.code], err.message, data);
  }
  if (err instanceof Error && err.name === 'AbortError') return err;
  return new ProtocolError(ProtocolErrorCode.InternalError, errorMessage(err));
}

/** An HTTP-level refusal on `/mcp`: the catalogue's status and a JSON-RPC error body with `id: null`. */
export interface JsonRpcRefusal {
  status: number;
  body: string;
}

export const JSON_RPC_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Refuses an HTTP request to `/mcp` before any JSON-RPC request in it is read (Host, session, capacity). */
export function jsonRpcRefusal({ code, message }: ErrorInfo): JsonRpcRefusal {
  const body = { jsonrpc: '2.0', error: { code: JSON_RPC_CODES[code], message, data: { code } }, id: null };
  return { status: ERROR_CATALOGUE[code].status, body: JSON.stringify(body) };
}

export function sendJsonRpcRefusal(reply: FastifyReply, error: ErrorInfo): FastifyReply {
  const { status, body } = jsonRpcRefusal(error);
  return reply.code(status).type(JSON_RPC_CONTENT_TYPE).send(body);
}
