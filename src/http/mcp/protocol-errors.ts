import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError } from '@modelcontextprotocol/server';
import { errorMessage, isSwitchboardError } from '../../errors.js';

/**
 * A failure of a forwarded request (prompts/get, resources/read, completion/complete, …) as the
 * JSON-RPC error `/mcp` answers with. A server's own protocol error passes as it was (code,
 * message, data); our failures keep their stable code in `data.code` (SPEC §7).
 */
export function toProtocolError(err: unknown, uri?: string): unknown {
  if (ProtocolError.isInstance(err)) return new ProtocolError(err.code, err.message, err.data);
  if (isSwitchboardError(err, 'PROMPT_NOT_FOUND') || isSwitchboardError(err, 'TOOL_NOT_FOUND') || isSwitchboardError(err, 'VALIDATION_FAILED')) {
    return new ProtocolError(ProtocolErrorCode.InvalidParams, err.message, { code: err.code });
  }
  if (isSwitchboardError(err, 'RESOURCE_NOT_FOUND')) {
    return uri !== undefined ? new ResourceNotFoundError(uri, err.message) : new ProtocolError(ProtocolErrorCode.InvalidParams, err.message, { code: err.code });
  }
  if (isSwitchboardError(err)) return new ProtocolError(ProtocolErrorCode.InternalError, err.message, { code: err.code });
  // An abort (the caller cancelled) is no error anyone reads; anything else is an internal one.
  if (err instanceof Error && err.name === 'AbortError') return err;
  return new ProtocolError(ProtocolErrorCode.InternalError, errorMessage(err));
}
