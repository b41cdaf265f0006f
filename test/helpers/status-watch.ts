import WebSocket from 'ws';

/**
 * Resolves with `GET /status` of the daemon at `base` once `predicate` holds for it, re-reading
 * the status after every event of its `/events` feed (no polling, no sleeps). Rejects after
 * `timeoutMs` with the last status seen, so a test that waits for the wrong state says why.
 */
export async function waitForStatus<S = Record<string, unknown>>(
  base: string,
  predicate: (status: S) => boolean,
  options: { timeoutMs?: number; headers?: Record<string, string> } = {},
): Promise<S> {
  const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/events`, { headers: options.headers ?? {} });
  let last: S | undefined;
  let checking = false;
  let again = false;
  try {
    return await new Promise<S>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`status never matched within ${options.timeoutMs ?? 20_000} ms; last: ${JSON.stringify(last)}`)),
        options.timeoutMs ?? 20_000,
      );
      const check = async (): Promise<void> => {
        // One read at a time; an event during a read asks for one more read after it.
        if (checking) {
          again = true;
          return;
        }
        checking = true;
        try {
          do {
            again = false;
            const response = await fetch(`${base}/status`, { headers: options.headers ?? {} });
            last = (await response.json()) as S;
            if (predicate(last)) {
              clearTimeout(timer);
              resolve(last);
              return;
            }
          } while (again);
        } catch (err) {
          clearTimeout(timer);
          reject(err as Error);
        } finally {
          checking = false;
        }
      };
      socket.on('message', () => void check());
      socket.once('open', () => void check());
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  } finally {
    socket.terminate();
  }
}
