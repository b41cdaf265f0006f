import type { FastifyReply, FastifyRequest } from 'fastify';
import { delay } from '../util/delay.js';
import { deferred, type Deferred } from '../util/deferred.js';

/**
 * The requests in flight, so that shutdown can drain like a server that is still alive: the
 * listener stays open while they finish (`/health` answers, everything else gets 503
 * `SHUTTING_DOWN` with `Connection: close`, see app.ts), and only then does it close.
 *
 * Every request counts from its first hook until its response is closed (sent, or the client
 * went away), hijacked ones (`/mcp`) included, except the long-lived streams that never end by
 * themselves: WebSocket upgrades (`/events`, closed by shutdown itself) and `GET` event streams
 * (an MCP session's standalone stream, closed when the sessions close).
 */
export class RequestDrain {
  #active = 0;
  #idle: Deferred<void> | undefined;

  /** The `onRequest` hook that counts; register it before any hook that may answer. */
  readonly hook = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    if (!isStream(request)) {
      this.#active += 1;
      reply.raw.once('close', () => this.#end());
    }
    done();
  };

  /** Requests in flight right now. */
  get active(): number {
    return this.#active;
  }

  /** Resolves true once no request is in flight, or false when `ms` pass first. */
  async settle(ms: number): Promise<boolean> {
    if (this.#active === 0) return true;
    this.#idle ??= deferred();
    const stop = new AbortController();
    try {
      return await Promise.race([this.#idle.promise.then(() => true), delay(ms, stop.signal).then(() => false)]);
    } finally {
      stop.abort();
    }
  }

  #end(): void {
    this.#active -= 1;
    if (this.#active > 0) return;
    this.#idle?.resolve();
    this.#idle = undefined;
  }
}

function isStream(request: FastifyRequest): boolean {
  if (request.headers.upgrade !== undefined) return true;
  return request.method === 'GET' && (request.headers.accept ?? '').includes('text/event-stream');
}
