import type { connectToServer } from './client.js';
import type { ServerLogEvent } from '../../events/daemon-events.js';
import type { ServerLogStream } from './stderr-ring.js';

/** One event per server and stream at most this often. @default 100 */
export const LOG_BATCH_MS = 100;
/** Lines per event; a server that writes more within one batch has the rest counted as dropped. */
export const LOG_BATCH_LINES = 200;

/**
 * Wraps `connect` so that every connection's stderr lines and MCP log messages become
 * `server.log` events (what `switchboard logs --follow` prints), batched per server and stream.
 * The lines are the server's own output, as in `/servers/:name` `stderrTail`; nothing of the
 * daemon's (configs, env, headers) is added. Lines written while connecting are in the tail,
 * not in events: the events start with the connection.
 */
export function forwardServerLogs(
  connect: typeof connectToServer,
  emit: (event: ServerLogEvent) => void,
  options: { batchMs?: number; batchLines?: number } = {},
): typeof connectToServer {
  const batchMs = options.batchMs ?? LOG_BATCH_MS;
  const batchLines = options.batchLines ?? LOG_BATCH_LINES;
  return async (name, config, connectOptions) => {
    const connection = await connect(name, config, connectOptions);
    const batches = new Map<ServerLogStream, { lines: string[]; dropped: number }>();
    const flush = (stream: ServerLogStream): void => {
      const batch = batches.get(stream);
      batches.delete(stream);
      if (!batch) return;
      emit({ type: 'server.log', server: name, stream, lines: batch.lines, ...(batch.dropped > 0 ? { dropped: batch.dropped } : {}) });
    };
    connection.stderr.onLines((lines, stream) => {
      let batch = batches.get(stream);
      if (!batch) {
        batch = { lines: [], dropped: 0 };
        batches.set(stream, batch);
        setTimeout(() => flush(stream), batchMs).unref();
      }
      const room = Math.max(0, batchLines - batch.lines.length);
      batch.lines.push(...lines.slice(0, room));
      batch.dropped += Math.max(0, lines.length - room);
    });
    return connection;
  };
}
