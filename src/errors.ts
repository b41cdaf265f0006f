/**
 * The error catalogue: every error the daemon answers with has one stable SCREAMING_SNAKE code,
 * one HTTP status and a default message. Callers branch on `code`, never on message text.
 * `test/unit/errors.test.ts` checks this table against `openapi.yaml` in both directions.
 */
export const ERROR_CATALOGUE = {
  VALIDATION_FAILED: { status: 400, message: 'The request is not valid' },
  OAUTH_STATE_INVALID: { status: 400, message: 'The sign-in callback is unknown, expired or already used' },
  UNAUTHORIZED: { status: 401, message: 'A valid bearer token is required' },
  KEY_EXPIRED: { status: 401, message: 'This agent key has expired' },
  KEY_REVOKED: { status: 401, message: 'This agent key was revoked' },
  JWT_MALFORMED: { status: 401, message: 'The bearer token is not a well-formed JWT (or lacks its exp claim)' },
  JWT_ALGORITHM_REFUSED: { status: 401, message: "The token's signing algorithm is not accepted (none and HMAC never are)" },
  JWT_KEY_UNKNOWN: { status: 401, message: "No key of the identity provider's JWKS matches the token's kid" },
  JWT_SIGNATURE_INVALID: { status: 401, message: "The token's signature does not verify" },
  JWT_EXPIRED: { status: 401, message: 'The token has expired' },
  JWT_NOT_YET_VALID: { status: 401, message: 'The token is not valid yet (nbf or iat in the future)' },
  JWT_ISSUER_INVALID: { status: 401, message: 'The token was issued by another issuer than agentAuth.jwt.issuer' },
  JWT_AUDIENCE_INVALID: { status: 401, message: 'The token is not meant for any of agentAuth.jwt.audiences' },
  JWT_AGENT_INVALID: { status: 401, message: "The token's agent claim is missing or not a valid agent name" },
  FORBIDDEN: { status: 403, message: 'This route is for the operator; an agent key cannot use it' },
  FORBIDDEN_HOST: { status: 403, message: 'The Host header does not name this Switchboard' },
  FORBIDDEN_ORIGIN: { status: 403, message: 'This Origin may not call this Switchboard' },
  CODE_MODE_DISABLED: { status: 403, message: 'Code mode is off for this caller (codeMode: true turns it on)' },
  APPROVAL_DENIED: { status: 403, message: 'An operator denied the call' },
  POLICY_DENIED: { status: 403, message: 'A policy refused the request (its rule and reason are named); it did not run' },
  TASK_REQUIRED: { status: 400, message: 'This tool runs only as a task: a 2025-11-25 client calls it with params.task' },
  TASKS_NOT_NEGOTIATED: { status: 400, message: 'This needs the io.modelcontextprotocol/tasks extension, which the client did not declare' },
  MCP_SESSION_REQUIRED: { status: 400, message: 'A request other than initialize must carry an Mcp-Session-Id header' },
  ROUTE_NOT_FOUND: { status: 404, message: 'No such route' },
  MCP_SESSION_NOT_FOUND: { status: 404, message: 'No such MCP session (it ended, or the daemon restarted): initialize a new one' },
  SERVER_NOT_FOUND: { status: 404, message: 'No such server' },
  AGENT_NOT_FOUND: { status: 404, message: 'No such agent' },
  TOOL_NOT_FOUND: { status: 404, message: 'No such tool' },
  PROMPT_NOT_FOUND: { status: 404, message: 'No such prompt' },
  RESOURCE_NOT_FOUND: { status: 404, message: 'No server has that resource' },
  APPROVAL_NOT_FOUND: { status: 404, message: 'No pending approval with that id (decided, timed out or withdrawn)' },
  RESULT_NOT_FOUND: { status: 404, message: 'No kept result with that handle' },
  TASK_NOT_FOUND: { status: 404, message: "No task with that id for this caller (unknown, expired or another agent's)" },
  RESULT_EXPIRED: { status: 410, message: 'The kept result expired or was evicted; call the tool again' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'The request body must be JSON' },
  OAUTH_NOT_APPLICABLE: { status: 409, message: 'This server does not sign in with OAuth' },
  TASK_CANCELLED: { status: 409, message: 'The task was cancelled: it has no result' },
  AGENT_EXISTS: { status: 409, message: 'An agent of that name already exists' },
  AGENT_IN_CONFIG: { status: 409, message: "This agent's key comes from the config file" },
  APPROVAL_PENDING: { status: 409, message: 'The call waits for an approval; retry it with the same arguments once approved' },
  TOOL_CHANGED: { status: 409, message: 'The tool changed its definition since it was served and is held until approved' },
  UPGRADE_REQUIRED: { status: 426, message: 'This route is a WebSocket: send an upgrade request' },
  AGENT_RATE_LIMITED: { status: 429, message: 'This agent is over its rate limit; retry after Retry-After seconds' },
  APPROVALS_FULL: { status: 429, message: 'Too many calls are waiting for approval' },
  AGENT_BUSY: { status: 429, message: 'This agent has as many requests in flight as it may' },
  BUDGET_EXCEEDED: { status: 429, message: 'This agent has spent its token budget; retry after Retry-After seconds' },
  SERVER_BUSY: { status: 429, message: 'The MCP server is busy: the wait would outlast the deadline, its queue is full, or it asked for a pause (Retry-After)' },
  INTERNAL_ERROR: { status: 500, message: 'Internal error' },
  DISCOVERY_FAILED: { status: 500, message: 'Reading the MCP server configurations failed' },
  UPSTREAM_CONNECT_FAILED: { status: 502, message: 'Could not connect to the MCP server' },
  UPSTREAM_ERROR: { status: 502, message: 'The MCP server answered with an error' },
  UPSTREAM_PROTOCOL_ERROR: { status: 502, message: 'The MCP server sent something that is not MCP' },
  UPSTREAM_MESSAGE_TOO_LARGE: { status: 502, message: 'The MCP server sent a message over the size limit' },
  UPSTREAM_SESSION_EXPIRED: { status: 502, message: 'The MCP server no longer knows the session' },
  UPSTREAM_AUTH_FAILED: { status: 502, message: 'Signing in to the MCP server failed' },
  CALL_OUTCOME_UNKNOWN: { status: 502, message: 'The connection was lost during the call; it may or may not have run' },
  SERVER_NOT_CONNECTED: { status: 503, message: 'The MCP server is not connected' },
  UPSTREAM_AUTH_REQUIRED: { status: 503, message: 'The MCP server is waiting for a person to sign in (switchboard login <server>)' },
  JWKS_UNAVAILABLE: { status: 503, message: "The identity provider's keys (JWKS) could not be fetched; the token cannot be checked" },
  NOT_READY: { status: 503, message: 'Switchboard is still starting' },
  SHUTTING_DOWN: { status: 503, message: 'Switchboard is shutting down' },
  TOO_MANY_MCP_SESSIONS: { status: 503, message: 'Too many MCP sessions, and every one is busy' },
  SERVER_CLOSED: { status: 503, message: 'The connection was closed' },
  SANDBOX_UNAVAILABLE: { status: 503, message: 'The sandbox this MCP server asks for cannot be set up here; it was not started' },
  SERVER_SUSPENDED: { status: 503, message: 'The MCP server crashed too many times and is suspended until a reload' },
  UPSTREAM_CONNECT_TIMEOUT: { status: 504, message: 'Connecting to the MCP server timed out' },
  UPSTREAM_PING_TIMEOUT: { status: 504, message: 'The MCP server did not answer a ping in time' },
  UPSTREAM_TIMEOUT: { status: 504, message: 'The MCP server did not answer in time' },
  SCRIPT_TIMEOUT: { status: 504, message: 'The script ran past its time limit' },
  SCRIPT_ERROR: { status: 422, message: 'The script threw an error or is not valid JavaScript' },
  SCRIPT_MEMORY_LIMIT: { status: 422, message: 'The script ran out of its memory limit' },
  SCRIPT_OUTPUT_TOO_LARGE: { status: 422, message: "The script's value or output is over its size limit" },
  SCRIPT_CALL_LIMIT: { status: 429, message: 'The script made more tool calls than a run may' },
  TOOL_CALL_TIMEOUT: { status: 504, message: 'The tool call timed out' },
  APPROVAL_TIMEOUT: { status: 504, message: 'Nobody approved or denied the call in time; it did not run' },
  LOOP_DETECTED: { status: 508, message: 'The MCP server leads back to this Switchboard' },
  CONFIG_INVALID: { status: 500, message: 'The configuration is not valid' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export class SwitchboardError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** For a refusal that will pass (a rate limit): how long to wait, sent as `Retry-After` on REST. */
  readonly retryAfterMs: number | undefined;
  /** For a name that matched nothing: the nearest names the caller may have meant (`suggestions` on the wire). */
  readonly suggestions: readonly string[] | undefined;

  constructor(code: ErrorCode, message?: string, options?: { cause?: unknown; retryAfterMs?: number; suggestions?: readonly string[] }) {
    super(message ?? ERROR_CATALOGUE[code].message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SwitchboardError';
    this.code = code;
    this.status = ERROR_CATALOGUE[code].status;
    this.retryAfterMs = options?.retryAfterMs;
    this.suggestions = options?.suggestions;
  }
}

export function isSwitchboardError(err: unknown, code?: ErrorCode): err is SwitchboardError {
  return err instanceof SwitchboardError && (code === undefined || err.code === code);
}

/** An error as it travels in `lastError`, events and tool results: a stable code and a message. */
export interface ErrorInfo {
  code: ErrorCode;
  message: string;
}

/**
 * Any thrown value as `{code, message}`: our own errors keep theirs, anything else gets
 * `fallback` with its own message (upstream and transport messages are worth showing).
 */
export function toErrorInfo(err: unknown, fallback: ErrorCode = 'INTERNAL_ERROR'): ErrorInfo {
  if (err instanceof SwitchboardError) return { code: err.code, message: err.message };
  return { code: fallback, message: errorMessage(err) };
}

/** The message of any thrown value, for logs and `MCP error: …` results. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : JSON.stringify(err);
}
