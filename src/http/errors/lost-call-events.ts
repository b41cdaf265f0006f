import { JSON_RPC_CODES } from './jsonrpc-error.js';

/**
 * The answer a forwarding replica gives for the calls of a relayed `/mcp` stream whose owner died
 * mid-stream (issue #43): one SSE `message` event per JSON-RPC request of the POST, each a
 * `CALL_OUTCOME_UNKNOWN` error with the request's id — the call may or may not have run. Without
 * it the stream ends without an answer, and the SDK client (which resumes only streams that sent
 * an event id) waits for its request timeout. A blank line first ends an event the owner left
 * half-written. Undefined when the POST carried no request (nothing waits for an answer).
 */
export function lostCallEvents(body: unknown): string | undefined {
  const messages = Array.isArray(body) ? (body as unknown[]) : [body];
  const ids = messages.flatMap((m) => {
    const message = m as { id?: unknown; method?: unknown } | null;
    const id = message?.id;
    return typeof message?.method === 'string' && (typeof id === 'string' || typeof id === 'number') ? [id] : [];
  });
  if (ids.length === 0) return undefined;
  const error = {
    code: JSON_RPC_CODES.CALL_OUTCOME_UNKNOWN,
    message: 'The replica running the call stopped during it; it may or may not have run',
    data: { code: 'CALL_OUTCOME_UNKNOWN' },
  };
  return `\n\n${ids.map((id) => `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, error })}\n\n`).join('')}`;
}
