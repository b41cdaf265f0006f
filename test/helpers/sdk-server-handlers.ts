import type { Server } from '@modelcontextprotocol/server';
import { deferred, type Deferred } from '../../src/util/deferred.js';

/**
 * What tests of a `/mcp` entry (the SDK's handler, our direct path) make an SDK `Server` do, and
 * read back from its answers.
 */

type CallHandler = Parameters<Server['setRequestHandler']> extends [unknown, infer H] ? H : never;

/**
 * A `tools/call` handler that never answers on its own: `started` resolves when it is called,
 * `aborted` when its request's signal aborts (the client went away, the entry closed), and then it fails.
 */
export function answersOnlyAnAbort(): { handler: CallHandler; started: Deferred<void>; aborted: Deferred<void> } {
  const started = deferred();
  const aborted = deferred();
  const handler = ((_request: unknown, ctx: { mcpReq: { signal: AbortSignal } }) => {
    started.resolve();
    return new Promise((_resolve, reject) => {
      ctx.mcpReq.signal.addEventListener('abort', () => {
        aborted.resolve();
        reject(new Error('aborted'));
      });
    });
  }) as CallHandler;
  return { handler, started, aborted };
}

/** The JSON-RPC messages of an SSE answer's `message` events, in order. */
export function sseMessages(body: string): Record<string, unknown>[] {
  return body
    .split('\n\n')
    .filter((frame) => frame.startsWith('event: message'))
    .map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) as Record<string, unknown>);
}
