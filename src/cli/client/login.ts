import { isRecord } from './daemon-client.js';
import { clientFor, CONNECTION_OPTIONS, helpRequested, oneLine, parseCommandArgs, runCommand, UsageError, type CommandIo } from './command.js';
import { usageOf } from '../help.js';
import { openInBrowser } from './open-browser.js';
import { OPERATION_TIMEOUT_MS, serverOf } from './reload.js';
import { watchStatus, type StatusEvent } from './status-events.js';
import { plural, serverLine } from './views.js';

export const LOGIN_USAGE = usageOf('login');
export const LOGOUT_USAGE = usageOf('logout');

/** How long `login` waits for the person to finish in the browser. @default 300 s */
const DEFAULT_WAIT_S = 300;

export interface LoginIo extends CommandIo {
  /** Opens the authorization URL; returns whether it could. @default xdg-open / open when present */
  openUrl?: (url: string) => boolean;
}

const LOGIN_OPTIONS = {
  ...CONNECTION_OPTIONS,
  'no-browser': { type: 'boolean' },
  timeout: { type: 'string' },
} as const;

type Outcome = { ok: true } | { ok: false; why: string };

/**
 * `switchboard login <server>`: starts the server's sign-in on the daemon, prints the URL (and
 * opens it when a browser is at hand), then follows the daemon's events until the server
 * connects with the new tokens (exit 0) or fails (exit 1).
 */
export function runLogin(io: LoginIo): Promise<number> {
  return runCommand(io, LOGIN_USAGE, async () => {
    const { values, positionals } = parseCommandArgs(io.argv, LOGIN_OPTIONS);
    if (helpRequested(values, io, 'login')) return 0;
    const server = onlyServer(positionals);
    const waitS = values.timeout === undefined ? DEFAULT_WAIT_S : Number(values.timeout);
    if (!Number.isFinite(waitS) || waitS <= 0) throw new UsageError(`invalid --timeout "${values.timeout}"`);
    const client = clientFor(values, io);
    // Watching first: the sign-in may finish before the person reads the URL.
    const watch = await watchStatus(client.url, values.token ?? (io.env.SWITCHBOARD_TOKEN || undefined));
    try {
      const res = await client.request('POST', `/servers/${encodeURIComponent(server)}/login`);
      const url = isRecord(res.body) && typeof res.body.authorizationUrl === 'string' ? res.body.authorizationUrl : undefined;
      if (!url) throw new Error('the daemon gave no authorization URL');
      io.stdout.write(`Sign in to "${server}" in a browser:\n\n  ${url}\n\n`);
      const opened = !values['no-browser'] && (io.openUrl ?? ((u) => openInBrowser(u, io.env)))(url);
      io.stdout.write(`${opened ? 'Opened it in your browser. ' : ''}Waiting for the sign-in to finish…\n`);
      let reconnecting = false;
      const outcome = await watch.until<Outcome>((event: StatusEvent) => {
        if (event.server !== server) return undefined;
        if (event.status === 'connecting') reconnecting = true;
        if (event.status === 'connected') return { ok: true };
        if (reconnecting && (event.status === 'failed' || event.status === 'needs_auth')) {
          return { ok: false, why: event.error ? `${event.error.code}: ${oneLine(event.error.message)}` : event.status };
        }
        return undefined;
      }, waitS * 1000);
      if (!outcome.ok) {
        io.stderr.write(`switchboard: signed in, but "${server}" did not connect: ${outcome.why}\n`);
        return 1;
      }
      // The status event comes before the tools are listed; the server's detail has them.
      const detail = serverOf((await client.request('GET', `/servers/${encodeURIComponent(server)}`)).body, server);
      io.stdout.write(`Signed in to "${server}": ${detail.status ?? 'connected'}, ${plural(detail.toolCount ?? 0, 'tool')}.\n`);
      return 0;
    } finally {
      watch.close();
    }
  });
}

/** `switchboard logout <server>`: forgets the server's tokens (revoking them where it can). */
export function runLogout(io: CommandIo): Promise<number> {
  return runCommand(io, LOGOUT_USAGE, async () => {
    const { values, positionals } = parseCommandArgs(io.argv, CONNECTION_OPTIONS);
    if (helpRequested(values, io, 'logout')) return 0;
    const server = onlyServer(positionals);
    const res = await clientFor(values, io).request('POST', `/servers/${encodeURIComponent(server)}/logout`, { timeoutMs: OPERATION_TIMEOUT_MS });
    if (values.json) io.stdout.write(res.text.endsWith('\n') ? res.text : `${res.text}\n`);
    else io.stdout.write(`signed out of ${serverLine(serverOf(res.body, server))}\n`);
    return 0;
  });
}

function onlyServer(positionals: string[]): string {
  const [server, extra] = positionals;
  if (server === undefined) throw new UsageError('missing <server>');
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
  return server;
}
