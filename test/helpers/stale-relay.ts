import { createServer, connect, type Server, type Socket } from 'node:net';
import type { Cleanup } from './process.js';

/**
 * A TCP relay on a loopback port in front of one real replica, for the balancer tests of a replica
 * that dies (issue #43 item 7): it passes bytes both ways until `freeze()`. From then on it does
 * what a balancer sees in the moment after a replica was SIGKILLed and before it has read the
 * closes the kernel sent for it — the moment a busy nginx was seen in (B15): the port refuses new
 * connections, and a connection the balancer already holds looks open (the replica's close is
 * not passed on) until the balancer writes to it, which resets it. So a test can put a request
 * into that moment on purpose, not by load. Nothing else is faked: the replica and the balancer
 * are real processes.
 */
export interface StaleRelay {
  /** `127.0.0.1:port` for the balancer's config. */
  address: string;
  /** Connections the balancer opened through the relay so far. */
  readonly connections: number;
  /** Stop listening (new connects are refused) and hold every open connection as a stale one. */
  freeze(): Promise<void>;
  close(): Promise<void>;
}

export async function startStaleRelay(target: { host: string; port: number }, cleanup?: Cleanup): Promise<StaleRelay> {
  const open = new Set<Socket>();
  let frozen = false;
  let connections = 0;
  const server: Server = createServer((front) => {
    connections += 1;
    open.add(front);
    const back = connect(target.port, target.host);
    const drop = (): void => {
      open.delete(front);
      front.destroy();
      back.destroy();
    };
    front.on('data', (chunk: Buffer) => {
      // A write to a connection whose replica is gone: the peer's kernel answers with a reset.
      if (frozen) front.resetAndDestroy();
      else back.write(chunk);
    });
    back.on('data', (chunk: Buffer) => {
      if (!frozen) front.write(chunk);
    });
    front.on('close', drop).on('error', drop);
    // The replica's close reaches the balancer only while not frozen (frozen: "not read yet").
    back.on('close', () => (frozen ? undefined : drop())).on('error', () => (frozen ? undefined : drop()));
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const closeServer = (): Promise<void> => new Promise((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  const relay: StaleRelay = {
    address: `127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    async freeze() {
      frozen = true;
      // close() waits for open connections to end; the listening socket itself is closed at once.
      void closeServer();
    },
    async close() {
      frozen = true;
      for (const socket of open) socket.destroy();
      open.clear();
      await closeServer();
    },
  };
  cleanup?.(relay.close);
  return relay;
}
