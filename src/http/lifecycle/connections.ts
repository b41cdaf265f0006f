import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The HTTP connections of the listener and whether each has a request in progress. Node's
 * `server.close()` ends only the keep-alive connections idle at that moment: one still busy ends
 * when its client hangs up, and one a client opened without sending a request yet (undici opens
 * spares) is not seen as idle at all. Either would hold shutdown open for as long as the client
 * pleases. Once the daemon is closing, this ends every connection the moment it has nothing in
 * progress.
 */
export class ConnectionTracker {
  private readonly busy = new Map<Socket, number>();
  private closing = false;

  constructor(server: Server) {
    server.on('connection', (socket: Socket) => {
      this.busy.set(socket, 0);
      socket.once('close', () => this.busy.delete(socket));
    });
    // A WebSocket is its own business (the event feed closes it with a close frame).
    server.on('upgrade', (request: { socket: Socket }) => this.busy.delete(request.socket));
    server.on('request', (request, response) => {
      const socket = request.socket;
      this.busy.set(socket, (this.busy.get(socket) ?? 0) + 1);
      response.once('close', () => {
        const left = (this.busy.get(socket) ?? 1) - 1;
        this.busy.set(socket, left);
        if (this.closing && left === 0) socket.destroy();
      });
    });
  }

  /** From now on, no connection outlives its last response; the idle ones end at once. */
  closeIdle(): void {
    this.closing = true;
    for (const [socket, inProgress] of this.busy) if (inProgress === 0) socket.destroy();
  }
}
