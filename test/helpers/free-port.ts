import { createServer } from 'node:net';

/**
 * A port nobody listens on right now (bound on 127.0.0.1 and released), for a config that must
 * name a port up front: a daemon's own, or an HTTP upstream that is restarted on the same port.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
