import { createServer } from 'node:net';

/** Below Linux's ephemeral range (32768–60999): no outgoing connection and no `listen(0)` is handed these. */
const LOW = 20_000;
const HIGH = 32_767;

/**
 * A port nobody listens on right now (bound on 127.0.0.1 and released), for a config that must
 * name a port up front: a daemon's own, or an HTTP upstream that is restarted on the same port.
 * Drawn outside the ephemeral range: a port the kernel picked for `listen(0)` could be handed out
 * again — to another test's listener or an outgoing socket — before the config that names it binds.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW + 1));
    if (await canBind(port)) return port;
  }
}

function canBind(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A URL nothing answers at, for as long as a test needs: port 1 is outside both ranges the suite
 * listens in (`freePort`'s and the kernel's ephemeral one), so no other test can start listening
 * there meanwhile. A port from `freePort()` is free only when drawn: once, between two CLI commands
 * of cli-hints' "no daemon" test, another file's daemon drew the same one and answered 401
 * (issue #34, stop 65).
 */
export const NOBODY_LISTENS_URL = 'http://127.0.0.1:1';
