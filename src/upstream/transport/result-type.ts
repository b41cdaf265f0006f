import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';

/**
 * A 2026-07-28 result must carry `resultType`, and the SDK refuses one that does not. Servers in
 * use leave it out (the conformance suite's own reference server does, for most of its results),
 * and the only reading the revision allows is the one the 2025 era gave it: a complete result.
 * So on a modern connection a result without it is read as `complete` before the SDK sees it,
 * instead of failing the request (issue #21). Installed once the era is known; results of the
 * 2025 era are never touched (their agents must not see the field).
 */
export function completeMissingResultType(transport: Transport): void {
  const deliver = transport.onmessage;
  if (!deliver) return;
  transport.onmessage = (message, extra) => deliver(withResultType(message), extra);
}

function withResultType(message: JSONRPCMessage): JSONRPCMessage {
  if (!('result' in message) || !('id' in message)) return message;
  const result = message.result as unknown;
  if (typeof result !== 'object' || result === null || Array.isArray(result) || 'resultType' in result) return message;
  return { ...message, result: { ...(result as Record<string, unknown>), resultType: 'complete' } } as JSONRPCMessage;
}
