import { errorMessage, isSwitchboardError, SwitchboardError } from '../../errors.js';
import { loadedSdk } from '../../upstream/sdk.js';

/**
 * The other direction: what a server answered to a request forwarded over REST (`prompts/get`,
 * `resources/read`, …) as one of our codes, the server's error kept as `cause` (STYLE rule 3).
 * (On `/mcp` a server's JSON-RPC error passes through as it was, see jsonrpc-error.ts; what the
 * SDK itself reports — timeouts, a closed connection, a result that is not MCP — is turned into
 * our codes where it is caught, in `mcp/transport/connection.ts`.) A miss is 404 `RESOURCE_NOT_FOUND`,
 * bad arguments are 400 `VALIDATION_FAILED` (the caller can fix them), anything else the server
 * answered is 502 `UPSTREAM_ERROR`. Each keeps the server's message, which is worth showing.
 * Our own errors (not found here, timeouts, a server that is down) pass unchanged.
 */
export function toForwardedError(err: unknown): unknown {
  if (isSwitchboardError(err)) return err;
  const message = `The MCP server answered: ${errorMessage(err)}`;
  // A server's answer is an SDK error, so the SDK is loaded when there is one.
  const loaded = loadedSdk();
  if (!loaded) return new SwitchboardError('UPSTREAM_ERROR', message, { cause: err });
  const { ProtocolError, ProtocolErrorCode, ResourceNotFoundError } = loaded;
  // ResourceNotFoundError is a -32602 carrying {uri}; -32002 is what older SDKs sent for it.
  if (ResourceNotFoundError.isInstance(err) || (ProtocolError.isInstance(err) && err.code === ProtocolErrorCode.ResourceNotFound)) {
    return new SwitchboardError('RESOURCE_NOT_FOUND', message, { cause: err });
  }
  if (ProtocolError.isInstance(err) && err.code === ProtocolErrorCode.InvalidParams) {
    return new SwitchboardError('VALIDATION_FAILED', message, { cause: err });
  }
  return new SwitchboardError('UPSTREAM_ERROR', message, { cause: err });
}
