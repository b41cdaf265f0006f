import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { systemClock, type Clock } from '../../util/clock.js';

/**
 * A lingering close, as Apache and nginx do it, for connections the daemon ends while its client
 * may still be sending: a 413 for a body over the limit (Content-Length or chunked), a 503 during
 * the drain, a refused WebSocket upgrade. Closing a socket with unread data makes the kernel send
 * a reset; a client still writing then fails with EPIPE or ECONNRESET and drops the answer it had
 * not read yet (2 in 10 naive clients never saw their 413, 7 in 10 upgrade clients that sent a
 * frame early never saw their 403). So after the answer the socket is half-closed (our FIN once
 * the answer is flushed) and what the client still sends is read and dropped until it closes its
 * side too, for at most `maxBytes` and `maxMs`; only then is the socket destroyed.
 */

export interface LingerLimits {
  /** Bytes read and dropped after the answer before giving up. @default 64 MiB */
  maxBytes: number;
  /** Time after the answer before giving up. @default 5000 */
  maxMs: number;
}

export const DEFAULT_LINGER: LingerLimits = { maxBytes: 64 * 1024 * 1024, maxMs: 5_000 };

export class LingeringClose {
  readonly #limits: LingerLimits;
  readonly #clock: Clock;
  readonly #sockets = new Set<Socket>();
  #stopped = false;

  /** `clock` times `maxMs` (its timers never hold the process open); tests inject a manual one. */
  constructor(limits: Partial<LingerLimits> = {}, clock: Clock = systemClock) {
    this.#limits = { ...DEFAULT_LINGER, ...limits };
    this.#clock = clock;
  }

  /**
   * Lingers on the connections Node's HTTP server ends itself: after a `Connection: close`
   * response it calls `socket.destroySoon()` (end, then destroy once flushed). For a response
   * that finishes before its request body was read to the end, that call is replaced, for this
   * one response, by `close()`. Node's own 'finish' listener makes the call, right after ours.
   */
  install(server: Server): void {
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      response.prependOnceListener('finish', () => {
        if (request.complete) return;
        // Node would dump the rest of a body nobody reads (drop it unseen, before it reaches
        // the request); flowing, it reaches the request and close() counts it.
        if (request.readableFlowing === null) request.resume();
        const socket = request.socket;
        const restore = (): boolean => Reflect.deleteProperty(socket, 'destroySoon');
        socket.destroySoon = () => {
          restore();
          this.close(socket, request);
        };
        // A keep-alive response is not followed by destroySoon(): Node reads the body to its end.
        queueMicrotask(restore);
      });
    });
  }

  /**
   * Ends `socket` gracefully: our FIN goes out after everything written to it, what the client
   * still sends is dropped, and the socket is destroyed once the client has closed its side or
   * a limit is reached. `body` is where the client's bytes arrive when Node's HTTP parser still
   * reads the socket (the request); without it, the socket is read directly (a refused upgrade,
   * which Node has handed over).
   */
  close(socket: Socket, body?: Readable): void {
    if (socket.destroyed) return;
    // The client has closed its side already (or we are shutting down): nothing to wait for.
    if (this.#stopped || socket.readableEnded) {
      socket.destroySoon();
      return;
    }
    const source = body ?? socket;
    let read = 0;
    const drop = (chunk: Buffer | string): void => {
      read += chunk.length;
      if (read > this.#limits.maxBytes) socket.destroy();
    };
    const timer = this.#clock.setTimeout(() => socket.destroy(), this.#limits.maxMs);
    const done = (): void => void socket.destroy();
    this.#sockets.add(socket);
    socket.once('close', () => {
      this.#clock.clearTimeout(timer);
      source.off('data', drop);
      socket.off('end', done);
      this.#sockets.delete(socket);
    });
    socket.once('end', done);
    source.on('data', drop);
    socket.end();
  }

  /** Shutdown: every lingering socket ends now, and later closes no longer linger. */
  destroyAll(): void {
    this.#stopped = true;
    for (const socket of this.#sockets) socket.destroy();
  }
}
