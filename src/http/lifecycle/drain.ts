import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { waitFor } from '../../util/wait-for.js';
import { deferred, type Deferred } from '../../util/deferred.js';

/**
 * The requests in flight, so that shutdown can drain like a server that is still alive: the
 * listener stays open while they finish (`/health` answers, everything else gets 503
 * `SHUTTING_DOWN` with `Connection: close`, see app.ts), and only then does it close.
 *
 * Every request counts from its first hook until its response is closed (sent, or the client
 * went away), hijacked ones (`/mcp`) included, except the streams that never end by themselves
 * and that shutdown closes on its own: WebSocket upgrades (`/events`), `GET` event streams (a
 * 2025-era MCP session's standalone stream) and, once its body is read, a 2026-07-28 MCP
 * `subscriptions/listen`.
 */
/** How long calls cancelled at the end of the shutdown grace get to send their 503 (both wires). */
export const ABORTED_ANSWER_MS = 250;

export class RequestDrain {
  #active = 0;
  #idle: Deferred<void> | undefined;
  readonly #ends = new WeakMap<FastifyRequest, () => void>();

  /** Adds the hooks that count; call it before any hook that may answer. */
  install(app: FastifyInstance): void {
    app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      if (!isStreamByHeaders(request)) this.#begin(request, reply);
      done();
    });
    app.addHook('preHandler', (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
      if (isListenBody(request.body)) this.#ends.get(request)?.();
      done();
    });
  }

  /** Requests in flight right now. */
  get active(): number {
    return this.#active;
  }

  /** Resolves true once no request is in flight, or false when `ms` pass first. */
  async settle(ms: number): Promise<boolean> {
    if (this.#active === 0) return true;
    this.#idle ??= deferred();
    return waitFor(
      this.#idle.promise.then(() => true),
      { deadlineMs: ms, onDeadline: () => false },
    );
  }

  #begin(request: FastifyRequest, reply: FastifyReply): void {
    this.#active += 1;
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      this.#ends.delete(request);
      this.#active -= 1;
      if (this.#active > 0) return;
      this.#idle?.resolve();
      this.#idle = undefined;
    };
    this.#ends.set(request, end);
    reply.raw.once('close', end);
  }
}

function isStreamByHeaders(request: FastifyRequest): boolean {
  if (request.headers.upgrade !== undefined) return true;
  return request.method === 'GET' && (request.headers.accept ?? '').includes('text/event-stream');
}

/** A JSON-RPC body (or batch) opening a 2026-07-28 `subscriptions/listen` stream. */
function isListenBody(body: unknown): boolean {
  const messages = Array.isArray(body) ? (body as unknown[]) : [body];
  return messages.some((message) => (message as { method?: unknown } | null)?.method === 'subscriptions/listen');
}
