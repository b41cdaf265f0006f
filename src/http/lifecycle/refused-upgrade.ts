import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { LingeringClose } from './lingering-close.js';

/**
 * A WebSocket handshake answered with an HTTP status instead of 101 (a foreign Host or Origin, no
 * or a wrong key, a bad `since`, shutdown) must reach every client whole: the status, the JSON
 * error body, then the end of the connection (issue #35 item 4).
 *
 * - **`Connection: close`.** The socket was handed over by Node's HTTP server, which no longer
 *   parses it: nothing could answer a second request on it. Answered `keep-alive` (the default of
 *   a response the HTTP server did not make), a client that pools connections (Node's global
 *   agent) sent its next request on it and got ECONNRESET instead of its 403.
 * - **A graceful close** (`LingeringClose`): our FIN once the answer is flushed, what the client
 *   still sends (an eager client's first frame) read and dropped. Destroyed with those bytes
 *   unread, the socket is reset, and the client may lose the answer it had not read yet.
 *   @fastify/websocket destroys the socket of such a request in its own `onResponse` hook (for
 *   routes it decorates), which runs after this one: the socket is taken from it here
 *   (`request.ws`), so only the lingering close ends it.
 *
 * Only a real upgrade (see `isUpgrade`); a plain request that merely carries an `Upgrade` header
 * stays the HTTP server's, which closes it itself.
 */
export function closeRefusedUpgrades(app: FastifyInstance, lingering: LingeringClose): void {
  app.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
    if (isUpgrade(request)) void reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onResponse', (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
    if (isUpgrade(request)) {
      request.ws = false;
      lingering.close(request.raw.socket);
    }
    done();
  });
}

/**
 * An upgrade request as Node's HTTP parser tells one (RFC 9110 §7.8): an `Upgrade` header and the
 * `upgrade` token in `Connection`. Node hands such a request's socket to the server's 'upgrade'
 * listener (here @fastify/websocket's) instead of answering it itself.
 */
function isUpgrade(request: FastifyRequest): boolean {
  const connection = request.headers.connection;
  return request.headers.upgrade !== undefined && connection !== undefined && /(?:^|,)\s*upgrade\s*(?:,|$)/i.test(connection);
}
