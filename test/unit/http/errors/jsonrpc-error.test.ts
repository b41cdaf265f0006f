import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError } from '@modelcontextprotocol/server';
import { beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, SwitchboardError, type ErrorCode } from '../../../../src/errors.js';
import { JSON_RPC_CODES, jsonRpcRefusal, toJsonRpcError } from '../../../../src/http/errors/jsonrpc-error.js';
import { loadSdk } from '../../../../src/upstream/sdk.js';

// The daemon loads the SDK client with its first connection (src/upstream/sdk.ts); here the
// functions under test meet the SDK's values without one.
beforeAll(() => loadSdk());

/** The one error → JSON-RPC mapping (errors/jsonrpc-error.ts), for every code in the catalogue. */

const CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

/**
 * The codes that are not InternalError. Unknown names and bad input are InvalidParams (the MCP
 * spec; what `/mcp` answered before the mapping had one home), refusals of the HTTP request
 * itself are the SDK transport's -32000 / -32001 (FORBIDDEN_* and the session refusals kept
 * their numbers). Every other code — a failure serving a fine request — is InternalError.
 */
const NOT_INTERNAL: Partial<Record<ErrorCode, number>> = {
  VALIDATION_FAILED: ProtocolErrorCode.InvalidParams,
  TOOL_NOT_FOUND: ProtocolErrorCode.InvalidParams,
  TOOL_CHANGED: ProtocolErrorCode.InvalidParams,
  PROMPT_NOT_FOUND: ProtocolErrorCode.InvalidParams,
  RESOURCE_NOT_FOUND: ProtocolErrorCode.InvalidParams,
  RESULT_NOT_FOUND: ProtocolErrorCode.InvalidParams,
  RESULT_EXPIRED: ProtocolErrorCode.InvalidParams,
  OAUTH_STATE_INVALID: ProtocolErrorCode.InvalidParams,
  // Code mode off for the caller (issue #39): `run_script` is as good as an unknown tool to it.
  CODE_MODE_DISABLED: ProtocolErrorCode.InvalidParams,
  MCP_SESSION_NOT_FOUND: -32001,
  MCP_SESSION_REQUIRED: -32000,
  TOO_MANY_MCP_SESSIONS: -32000,
  UNAUTHORIZED: -32000,
  FORBIDDEN_HOST: -32000,
  FORBIDDEN_ORIGIN: -32000,
  ROUTE_NOT_FOUND: -32000,
  PAYLOAD_TOO_LARGE: -32000,
  UNSUPPORTED_MEDIA_TYPE: -32000,
  UPGRADE_REQUIRED: -32000,
  KEY_EXPIRED: -32000,
  KEY_REVOKED: -32000,
  FORBIDDEN: -32000,
  // An agent's JWT refused (issue #40 item 4): refused as UNAUTHORIZED is, each with its own code.
  JWT_MALFORMED: -32000,
  JWT_ALGORITHM_REFUSED: -32000,
  JWT_KEY_UNKNOWN: -32000,
  JWT_SIGNATURE_INVALID: -32000,
  JWT_EXPIRED: -32000,
  JWT_NOT_YET_VALID: -32000,
  JWT_ISSUER_INVALID: -32000,
  JWT_AUDIENCE_INVALID: -32000,
  JWT_AGENT_INVALID: -32000,
  JWKS_UNAVAILABLE: -32000,
  // Gateway-run tasks (issue #41): another agent's task is as good as unknown; tasks/* from a
  // client that did not negotiate the extension is the extension's own "capability missing".
  TASK_NOT_FOUND: ProtocolErrorCode.InvalidParams,
  TASK_CANCELLED: ProtocolErrorCode.InvalidParams,
  TASK_REQUIRED: ProtocolErrorCode.MethodNotFound,
  TASKS_NOT_NEGOTIATED: -32021,
};

describe('SwitchboardError → JSON-RPC', () => {
  it('has a JSON-RPC code for exactly the catalogue codes', () => {
    expect(Object.keys(JSON_RPC_CODES).sort()).toEqual([...CODES].sort());
    // -32601 only for TASK_REQUIRED: the 2025-11-25 spec's answer to a required task tool called plainly.
    for (const code of CODES) expect([-32000, -32001, -32021, -32601, -32602, -32603], code).toContain(JSON_RPC_CODES[code]);
  });

  it.each(CODES)('%s: answers a request with its JSON-RPC code and the code in data.code', (code) => {
    const mapped = toJsonRpcError(new SwitchboardError(code, `why: ${code}`));
    expect(mapped).toBeInstanceOf(ProtocolError);
    expect(mapped).toMatchObject({ code: JSON_RPC_CODES[code], message: `why: ${code}`, data: { code } });
    expect(JSON_RPC_CODES[code]).toBe(NOT_INTERNAL[code] ?? ProtocolErrorCode.InternalError);
  });

  it.each(CODES)('%s: refuses an HTTP request with the catalogue status and a JSON-RPC body', (code) => {
    const { status, body } = jsonRpcRefusal({ code, message: `no: ${code}` });
    expect(status).toBe(ERROR_CATALOGUE[code].status);
    expect(JSON.parse(body)).toEqual({ jsonrpc: '2.0', error: { code: JSON_RPC_CODES[code], message: `no: ${code}`, data: { code } }, id: null });
  });

  it("keeps a server's own protocol error, the SDK's resource-miss shape, and an abort as they are", () => {
    const upstream = new ProtocolError(-32099, 'the server says no', { detail: 1 });
    expect(toJsonRpcError(upstream)).toMatchObject({ code: -32099, message: 'the server says no', data: { detail: 1 } });

    const miss = toJsonRpcError(new SwitchboardError('RESOURCE_NOT_FOUND', 'No server has x://y'), 'x://y');
    expect(miss).toBeInstanceOf(ResourceNotFoundError);
    expect(miss).toMatchObject({ code: ProtocolErrorCode.InvalidParams, data: { uri: 'x://y' } });

    const abort = new DOMException('cancelled', 'AbortError');
    expect(toJsonRpcError(abort)).toBe(abort);
    expect(toJsonRpcError(new Error('boom'))).toMatchObject({ code: ProtocolErrorCode.InternalError, message: 'boom', data: undefined });
  });
});
