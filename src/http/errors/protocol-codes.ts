import type { ProtocolErrorCode } from '@modelcontextprotocol/client';

/**
 * The SDK's JSON-RPC error codes that the HTTP edge answers with whether or not the SDK client is
 * loaded yet (the code table of jsonrpc-error.ts: a `/mcp` request refused by a guard, a relayed
 * call lost with its replica). The package itself loads with the first connection or the first
 * `/mcp` request (upstream/sdk.ts); each number here is typed as the SDK's own enum member, so
 * the type checker holds it to the SDK's value.
 */
export const PROTOCOL_ERROR_CODES: {
  readonly MethodNotFound: ProtocolErrorCode.MethodNotFound;
  readonly InvalidParams: ProtocolErrorCode.InvalidParams;
  readonly InternalError: ProtocolErrorCode.InternalError;
  readonly MissingRequiredClientCapability: ProtocolErrorCode.MissingRequiredClientCapability;
} = {
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  MissingRequiredClientCapability: -32021,
};
