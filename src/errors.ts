/**
 * The error catalogue: every error the daemon answers with has one stable SCREAMING_SNAKE code,
 * one HTTP status and a default message. Callers branch on `code`, never on message text.
 * `test/unit/errors.test.ts` checks this table against `openapi.yaml` in both directions.
 */
export const ERROR_CATALOGUE = {
  VALIDATION_FAILED: { status: 400, message: 'The request is not valid' },
  UNAUTHORIZED: { status: 401, message: 'A valid bearer token is required' },
  FORBIDDEN_HOST: { status: 403, message: 'The Host header does not name this Switchboard' },
  FORBIDDEN_ORIGIN: { status: 403, message: 'This Origin may not call this Switchboard' },
  ROUTE_NOT_FOUND: { status: 404, message: 'No such route' },
  SERVER_NOT_FOUND: { status: 404, message: 'No such server' },
  TOOL_NOT_FOUND: { status: 404, message: 'No such tool' },
  OPERATION_CONFLICT: { status: 409, message: 'The operation conflicts with one in progress' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'The request body must be JSON' },
  UPGRADE_REQUIRED: { status: 426, message: 'This route is a WebSocket: send an upgrade request' },
  INTERNAL_ERROR: { status: 500, message: 'Internal error' },
  UPSTREAM_CONNECT_FAILED: { status: 502, message: 'Could not connect to the MCP server' },
  SERVER_NOT_CONNECTED: { status: 503, message: 'The MCP server is not connected' },
  NOT_READY: { status: 503, message: 'Switchboard is still starting' },
  SHUTTING_DOWN: { status: 503, message: 'Switchboard is shutting down' },
  SERVER_CLOSED: { status: 503, message: 'The connection was closed' },
  UPSTREAM_CONNECT_TIMEOUT: { status: 504, message: 'Connecting to the MCP server timed out' },
  TOOL_CALL_TIMEOUT: { status: 504, message: 'The tool call timed out' },
  LOOP_DETECTED: { status: 508, message: 'The MCP server leads back to this Switchboard' },
  CONFIG_INVALID: { status: 500, message: 'The configuration is not valid' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export class SwitchboardError extends Error {
  readonly code: ErrorCode;
  readonly status: number;

  constructor(code: ErrorCode, message?: string, options?: { cause?: unknown }) {
    super(message ?? ERROR_CATALOGUE[code].message, options);
    this.name = 'SwitchboardError';
    this.code = code;
    this.status = ERROR_CATALOGUE[code].status;
  }
}

export function isSwitchboardError(err: unknown, code?: ErrorCode): err is SwitchboardError {
  return err instanceof SwitchboardError && (code === undefined || err.code === code);
}

/** The message of any thrown value, for logs and `MCP error: …` results. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : JSON.stringify(err);
}
