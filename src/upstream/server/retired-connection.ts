import type { ServerConnection } from '../transport/client.js';
import type { ExitStatus } from '../transport/stdio-transport.js';

/**
 * A lost connection on its way out. A stdio process is killed at once (it is dead or frozen, and
 * its group must not linger). An HTTP connection is closed only before the next attempt: closing
 * it now would fail its requests in flight as "closed", hiding their own errors — a refused
 * connection proves a request never arrived and may be retried safely.
 */
export class RetiredConnection {
  #connection: ServerConnection | undefined;
  #closing: Promise<void> | undefined;

  retire(connection: ServerConnection): void {
    this.#connection = connection;
    this.#closing = connection.transport === 'stdio' ? connection.close() : undefined;
  }

  /**
   * Closes what was retired (nothing when nothing was). Resolves with how its child ended: a
   * frozen child only ends when it is killed, so its exit is known now, not when it was lost.
   */
  async close(): Promise<ExitStatus | undefined> {
    const retired = this.#connection;
    if (!retired) return undefined;
    const closing = this.#closing ?? retired.close();
    this.#connection = undefined;
    this.#closing = undefined;
    await closing.catch(() => undefined);
    return retired.exitStatus;
  }
}
