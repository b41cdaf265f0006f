import type { FastifyReply, FastifyRequest } from 'fastify';
import { toolNotFound } from '../../gateway/index.js';
import type { MCPManager } from '../../upstream/manager.js';
import type { Gateway } from '../../gateway/index.js';
import type { SwitchboardRuntime } from '../../runtime/runtime.js';
import { CLIENT_GONE } from '../../gateway/index.js';
import { logHttpError } from '../error-handler.js';
import { errorBody } from '../errors/http-error.js';
import { EventStream } from './event-stream.js';
import { progressData } from './progress-data.js';
import { restTrace } from '../../telemetry/agent-trace.js';
import type { CallToolBody } from '../schemas.js';

/**
 * `POST /tools/:name/call` with `Accept: text/event-stream` (SPEC §9): one `progress` event per
 * progress notification of the server, then exactly one `result` (the CallToolResult) or one
 * `error` (`{error: {code, message}}`, what would otherwise have been an HTTP error status).
 *
 * What can be known before the stream starts is answered the usual way: bad input has already
 * been rejected, and an unknown tool is a JSON 404 — a client should not have to parse a stream
 * to learn that. Progress keeps resetting the call's deadline (the call path does that); a
 * client that goes away cancels the upstream call.
 */
export async function streamCall(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: { manager: Pick<MCPManager, 'getCatalogue'>; runtime: Pick<SwitchboardRuntime, 'state' | 'whenReady'>; gateway: Gateway },
  name: string,
  body: CallToolBody,
): Promise<FastifyReply> {
  // A tool not listed yet while the startup gate is open may still come (as for a plain call).
  if (!deps.manager.getCatalogue().get(name) && deps.runtime.state === 'starting') await deps.gateway.settleStartup();
  if (!deps.manager.getCatalogue().get(name)) {
    deps.gateway.refuseHeld(name);
    throw toolNotFound(name, deps.manager.getCatalogue(), request.agent?.view);
  }
  const stream = new EventStream(reply);
  try {
    const result = await deps.gateway.call(name, body.arguments, {
      transport: 'rest',
      client: reply.raw,
      ...(request.agent ? { agent: request.agent } : {}),
      ...(body.timeoutMs !== undefined ? { timeoutMs: body.timeoutMs } : {}),
      onProgress: (progress) => stream.send('progress', progressData(progress)),
      ...restTrace(deps.gateway, request.headers),
    });
    stream.send('result', result);
  } catch (err) {
    // A client that went away reads nothing; anything else (the tool vanished since the check
    // above, shutdown's grace ended) is told in the stream, since the status line is long gone.
    if (err !== CLIENT_GONE) {
      const error = logHttpError(err, request);
      stream.send('error', errorBody(error.code, error.message, error.suggestions));
    }
  } finally {
    stream.end();
  }
  return reply;
}
