// The stand-in for `ws` that scripts/bundle.mjs gives @fastify/websocket in the CLI bundle: see
// `lazyWs` there. Not loaded anywhere else; its `import('ws')` is the real ws, resolved from the
// plugin's folder.
'use strict';
const { EventEmitter } = require('node:events');
let loading;
const load = () => (loading ??= import('ws'));
class Server extends EventEmitter {
  #options;
  #real;
  #closed = false;
  constructor(options) {
    super();
    this.#options = options;
  }
  get clients() {
    return this.#real ? this.#real.clients : new Set();
  }
  handleUpgrade(request, socket, head, callback) {
    if (this.#real) return this.#real.handleUpgrade(request, socket, head, callback);
    const guard = () => socket.destroy();
    socket.on('error', guard);
    load().then(
      ({ WebSocketServer }) => {
        socket.removeListener('error', guard);
        if (this.#closed || socket.destroyed) return socket.destroy();
        this.#real ??= new WebSocketServer(this.#options);
        this.#real.handleUpgrade(request, socket, head, callback);
      },
      (err) => {
        socket.removeListener('error', guard);
        socket.destroy(err);
      },
    );
  }
  close(callback) {
    this.#closed = true;
    if (this.#real) return this.#real.close(callback);
    if (callback) process.nextTick(callback);
  }
}
// @fastify/websocket constructs a client WebSocket only in injectWS, which the CLI never calls.
function WebSocket() {
  throw new Error('ws is loaded on first use in the CLI bundle (scripts/bundle.mjs): no injectWS');
}
module.exports = WebSocket;
module.exports.Server = Server;
module.exports.WebSocketServer = Server;
