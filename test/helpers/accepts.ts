import { connect } from 'node:net';

/** Polls no faster than this: a listening socket gives no event to wait on from outside. */
export const ACCEPT_POLL_MS = 50;

/** Whether something accepts a TCP connection on 127.0.0.1:`port` right now. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
