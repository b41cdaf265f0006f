import { WebSocket } from 'ws';
import { DaemonUnreachableError, describeFetchError, isRecord, type DaemonClient } from './daemon-client.js';
import { clientFor, CONNECTION_OPTIONS, EXIT_FAILURE, helpRequested, parseCommandArgs, runCommand, UsageError, type CommandIo } from './command.js';
import { usageOf } from '../help.js';
import { errorLine } from './views.js';

export const LOGS_USAGE = usageOf('logs');

const LOGS_OPTIONS = {
  ...CONNECTION_OPTIONS,
  lines: { type: 'string', short: 'n' },
  follow: { type: 'boolean', short: 'f' },
} as const;

/** Close code the daemon uses when it shuts down: following ends normally then. */
const GOING_AWAY = 1001;

/**
 * `switchboard logs <server> [-n N] [--follow]`: the server's stderr and log messages the
 * daemon keeps (`stderrTail` of `GET /servers/:name`), then, with `--follow`, every new line
 * from the `server.log` events of `/events` until Ctrl-C (or `io.signal`).
 */
export function runLogs(io: CommandIo & { signal?: AbortSignal }): Promise<number> {
  return runCommand(io, LOGS_USAGE, async () => {
    const { values, positionals } = parseCommandArgs(io.argv, LOGS_OPTIONS);
    if (helpRequested(values, io, 'logs')) return 0;
    const [server, extra] = positionals;
    if (server === undefined) throw new UsageError('missing <server>');
    if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
    const count = values.lines === undefined ? undefined : parseCount(values.lines);
    const client = clientFor(values, io);
    if (!values.follow) {
      const { tail, lastError } = await serverLog(client, server);
      writeLines(io, count === undefined ? tail : tail.slice(-count));
      // A server that never started (a command not found, a bad config) wrote nothing: why it is
      // not running is the one line worth showing.
      if (lastError) io.stderr.write(`switchboard: ${lastError}\n`);
      return 0;
    }
    return follow(io, client, server, count, values.token ?? io.env.SWITCHBOARD_TOKEN);
  });
}

async function follow(io: CommandIo & { signal?: AbortSignal }, client: DaemonClient, server: string, count: number | undefined, token: string | undefined): Promise<number> {
  // Subscribed before the history is read, so no line falls between the two.
  const feed = await openFeed(client.url, token);
  try {
    const { tail, lastError } = await serverLog(client, server);
    writeLines(io, count === undefined ? tail : tail.slice(-count));
    if (lastError) io.stderr.write(`switchboard: ${lastError}\n`);
    let seen = tail;
    const onEvent = (event: Record<string, unknown>): void => {
      if (event.server !== server) return;
      if (event.type === 'server.log' && Array.isArray(event.lines)) {
        const lines = event.lines.filter((line): line is string => typeof line === 'string');
        // Lines written between subscribing and reading the history arrive twice; print them once.
        const fresh = lines.slice(overlap(seen, lines));
        seen = [];
        writeLines(io, fresh);
        if (typeof event.dropped === 'number') io.stderr.write(`switchboard: ${event.dropped} lines of ${server} left out (too fast)\n`);
      } else if (event.type === 'server.status') {
        const why = errorLine(event.error, { firstLine: true });
        io.stderr.write(`switchboard: ${server} is ${String(event.status)}${why ? `: ${why}` : ''}\n`);
      }
    };
    const end = await feed.run(onEvent, io.signal ?? interruptSignal());
    if (end === undefined) return 0;
    // The daemon stopping ends the follow, as the end of the input ends `tail -f`'s pipe.
    io.stderr.write(`switchboard: the daemon closed the event feed (${`${end.code} ${end.reason}`.trim()})\n`);
    return end.code === GOING_AWAY ? 0 : EXIT_FAILURE;
  } finally {
    feed.close();
  }
}

/** The server's kept stderr lines, and — unless it is connected — its status and last error as one line. */
async function serverLog(client: DaemonClient, server: string): Promise<{ tail: string[]; lastError: string | undefined }> {
  const res = await client.request('GET', `/servers/${encodeURIComponent(server)}`);
  const body = isRecord(res.body) ? res.body : {};
  const tail = (Array.isArray(body.stderrTail) ? body.stderrTail : []).filter((line): line is string => typeof line === 'string');
  const why = body.status !== 'connected' ? errorLine(body.lastError, { firstLine: true }) : '';
  return { tail, lastError: why ? `${server} is ${String(body.status)}: ${why}` : undefined };
}

/** The length of the longest end of `before` that `after` starts with. */
function overlap(before: readonly string[], after: readonly string[]): number {
  for (let k = Math.min(before.length, after.length); k > 0; k--) {
    let same = true;
    for (let i = 0; i < k && same; i++) same = before[before.length - k + i] === after[i];
    if (same) return k;
  }
  return 0;
}

export interface Feed {
  /**
   * Delivers buffered, then live events until `signal` aborts (resolves undefined) or the daemon
   * closes the feed (resolves with the close code and reason).
   */
  run(onEvent: (event: Record<string, unknown>) => void, signal: AbortSignal): Promise<{ code: number; reason: string } | undefined>;
  close(): void;
}

/** `/events` over a WebSocket, buffering from the moment it opens; resolves once the hello arrived. */
export function openFeed(baseUrl: string, token: string | undefined): Promise<Feed> {
  const url = new URL('/events', baseUrl.replace(/^http/, 'ws'));
  const socket = new WebSocket(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  const buffered: Array<Record<string, unknown>> = [];
  let deliver: ((event: Record<string, unknown>) => void) | undefined;
  let closed: { code: number; reason: string } | undefined;
  let onClosed: (() => void) | undefined;
  socket.on('message', (data) => {
    let event: unknown;
    try {
      event = JSON.parse(String(data));
    } catch {
      return;
    }
    if (!isRecord(event)) return;
    if (deliver) deliver(event);
    else buffered.push(event);
  });
  // Errors after the handshake (a reset) end in 'close', which is handled; this keeps one from being thrown.
  socket.on('error', () => undefined);
  socket.on('close', (code, reason) => {
    closed = { code, reason: String(reason) };
    onClosed?.();
  });
  const feed: Feed = {
    run(onEvent, signal) {
      for (const event of buffered.splice(0)) onEvent(event);
      deliver = onEvent;
      return new Promise((resolve) => {
        const finish = (): void => {
          signal.removeEventListener('abort', finish);
          onClosed = undefined;
          resolve(signal.aborted ? undefined : closed);
        };
        if (signal.aborted || closed) return finish();
        onClosed = finish;
        signal.addEventListener('abort', finish, { once: true });
      });
    },
    close() {
      if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.terminate();
    },
  };
  return new Promise((resolve, reject) => {
    socket.once('unexpected-response', (_req, res) => {
      reject(new Error(`the daemon refused the event feed (HTTP ${res.statusCode})`));
      res.resume();
      socket.terminate();
    });
    socket.once('error', (err) => reject(new DaemonUnreachableError(baseUrl.replace(/\/+$/, ''), describeFetchError(err, 0), { cause: err })));
    // The hello is the first message: from then on the subscription is live.
    const waitHello = (data: unknown): void => {
      if (String(data).includes('"type":"hello"')) {
        socket.off('message', waitHello);
        resolve(feed);
      }
    };
    socket.on('message', waitHello);
  });
}

/** Aborts on the first Ctrl-C / SIGTERM of this process. */
export function interruptSignal(): AbortSignal {
  const controller = new AbortController();
  const stop = (): void => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    controller.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return controller.signal;
}

function parseCount(raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`invalid --lines "${raw}": expected a whole number`);
  return n;
}

function writeLines(io: CommandIo, lines: readonly string[]): void {
  if (lines.length > 0) io.stdout.write(`${lines.join('\n')}\n`);
}
