import WebSocket from 'ws';

/** The part of a `server.status` event the CLI reads. */
export interface StatusEvent {
  type: 'server.status';
  server: string;
  status: string;
  error?: { code: string; message: string };
  toolCount?: number;
}

export interface StatusWatch {
  /**
   * Resolves with the first status event (from the moment the watch opened) for which `decide`
   * returns a value; rejects when `timeoutMs` passes or the feed closes first.
   */
  until<T>(decide: (event: StatusEvent) => T | undefined, timeoutMs: number): Promise<T>;
  close(): void;
}

/**
 * Follows a daemon's `/events` feed for `server.status` events, so a command can wait for a
 * server to change state instead of polling. Every event from the moment the socket opened is
 * kept, so nothing that happens between opening the watch and starting to wait is missed.
 */
export async function watchStatus(baseUrl: string, token: string | undefined): Promise<StatusWatch> {
  const url = new URL('/events', baseUrl.replace(/^http/, 'ws'));
  const socket = new WebSocket(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  const seen: StatusEvent[] = [];
  const wake = new Set<() => void>();
  let closed = false;
  socket.on('message', (data) => {
    const event = JSON.parse(String(data)) as { type?: string };
    if (event.type === 'server.status') seen.push(event as StatusEvent);
    for (const waiter of wake) waiter();
  });
  socket.on('close', () => {
    closed = true;
    for (const waiter of wake) waiter();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
    socket.once('unexpected-response', (_req, res) => reject(new Error(`the event feed answered HTTP ${res.statusCode}`)));
  });
  socket.on('error', () => undefined);

  return {
    until<T>(decide: (event: StatusEvent) => T | undefined, timeoutMs: number): Promise<T> {
      let cursor = 0;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => finish(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`))), timeoutMs);
        const finish = (settle: () => void): void => {
          clearTimeout(timer);
          wake.delete(check);
          settle();
        };
        const check = (): void => {
          for (; cursor < seen.length; cursor += 1) {
            const decided = decide(seen[cursor] as StatusEvent);
            if (decided !== undefined) return finish(() => resolve(decided));
          }
          if (closed) finish(() => reject(new Error('the daemon closed the event feed')));
        };
        wake.add(check);
        check();
      });
    },
    close: () => socket.terminate(),
  };
}
