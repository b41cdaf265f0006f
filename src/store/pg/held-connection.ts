import type pg from 'pg';

/**
 * A pool connection held across several statements (a transaction, an advisory lock held while
 * something else runs), given back once.
 *
 * pg-pool hears a connection's `error` only while it lies idle in the pool: one taken with
 * `pool.connect()` has no listener. When the database ends it between two statements (a restart,
 * `pg_terminate_backend`, a cut network), pg emits `error` on the connection, and an `error`
 * nobody hears is an uncaught exception: the daemon would go down with its database. Held through
 * here, the loss is heard and passed to `onLost`, and the connection is destroyed when it is given
 * back rather than handed to the next query.
 */
export interface HeldConnection {
  readonly client: pg.PoolClient;
  /** Gives the connection back: destroyed when it was lost or `err` says it is broken. Once. */
  release(err?: Error): void;
}

export async function holdConnection(pool: pg.Pool, onLost?: (err: Error) => void): Promise<HeldConnection> {
  let lost: Error | undefined;
  // pg emits twice for one loss (the server's message, then the socket's end): reported once.
  const heard = (err: Error): void => {
    if (lost) return;
    lost = err;
    onLost?.(err);
  };
  // The callback form: a new connection is handed over while pg parses the server's ready message,
  // and the rest of that read (a termination already on its way) follows before any promise
  // settles. Listening inside the callback leaves no moment unheard.
  const client = await new Promise<pg.PoolClient>((resolve, reject) => {
    pool.connect((err, connected) => {
      if (err || !connected) return reject(err ?? new Error('no connection'));
      connected.on('error', heard);
      resolve(connected);
    });
  });
  return {
    client,
    release(err) {
      // The pool listens again from the moment it takes the connection back: no gap unheard.
      client.removeListener('error', heard);
      client.release(lost ?? err);
    },
  };
}
