import { isLoopbackHost } from '../../util/loopback.js';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EXIT_OK, EXIT_USAGE, oneLine, type Output } from '../context.js';
import { localOperatorKey } from '../../gateway/agents/operator-key.js';
import { renderHelp } from '../help.js';
import { createDaemonClient, DaemonError, DaemonUnreachableError, type DaemonClient, type FetchLike } from './daemon-client.js';

export { EXIT_OK, EXIT_USAGE, oneLine, type Output };

/** What a client command reads and writes; every edge is injectable for tests. */
export interface CommandIo {
  /** The arguments after the command name. */
  argv: string[];
  /** Where `SWITCHBOARD_URL` and `SWITCHBOARD_TOKEN` are read. */
  env: NodeJS.ProcessEnv;
  stdout: Output;
  stderr: Output;
  /** @default `node:http` (node-http-fetch.ts) */
  fetch?: FetchLike;
}

export const DEFAULT_DAEMON_URL = 'http://127.0.0.1:7337';

/** The daemon is unreachable, answered an error, or the tool result is an error. */
export const EXIT_FAILURE = 1;

/** Bad flags or arguments: exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** Flags every client command accepts. */
export const CONNECTION_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionsConfig;

export type ParsedCommandArgs<O extends OptionsConfig> = ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>>;

/** `parseArgs` in strict mode, with its errors turned into a one-line `UsageError`. */
export function parseCommandArgs<O extends OptionsConfig>(argv: string[], options: O): ParsedCommandArgs<O> {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

/** The daemon client for `--url` / `--token`, falling back to `SWITCHBOARD_URL` / `SWITCHBOARD_TOKEN`. */
export function clientFor(values: { url?: string | undefined; token?: string | undefined }, io: CommandIo): DaemonClient {
  const url = values.url ?? nonEmpty(io.env.SWITCHBOARD_URL) ?? DEFAULT_DAEMON_URL;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`invalid --url "${url}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`invalid --url "${url}": only http and https are supported`);
  }
  // Last, the operator key a local daemon without a `token` keeps once agents exist (issue #22) —
  // only for a daemon on this machine: the key must never travel to another host.
  const local = isLoopbackHost(parsed.hostname);
  const token = values.token ?? nonEmpty(io.env.SWITCHBOARD_TOKEN) ?? (local ? localOperatorKey(io.env) : undefined);
  return createDaemonClient({ url, ...(token ? { token } : {}), ...(io.fetch ? { fetch: io.fetch } : {}) });
}

/**
 * Runs a command body and maps what it throws to one line on stderr and an exit code:
 * usage → 2, unreachable daemon or daemon error → 1.
 */
export async function runCommand(io: CommandIo, usage: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`switchboard: ${oneLine(err.message)}\n${usage}\n`);
      return EXIT_USAGE;
    }
    if (err instanceof DaemonUnreachableError) {
      io.stderr.write(`switchboard: ${oneLine(err.message)}\n${unreachableHint(err, io)}`);
      return EXIT_FAILURE;
    }
    if (err instanceof DaemonError) {
      io.stderr.write(`switchboard: ${err.code}: ${oneLine(err.message)}\n`);
      if (err.suggestions.length > 0) io.stderr.write(`switchboard: did you mean ${orList(err.suggestions)}?\n`);
      return EXIT_FAILURE;
    }
    io.stderr.write(`switchboard: ${oneLine(err instanceof Error ? err.message : String(err))}\n`);
    return EXIT_FAILURE;
  }
}

/** Writes the command's `--help` text and returns true when asked for it. */
export function helpRequested(values: { help?: boolean | undefined }, io: CommandIo, command: string): boolean {
  if (values.help) io.stdout.write(renderHelp(command));
  return values.help === true;
}

/** Prints a response body as the daemon sent it, for `--json`. */
export function writeRaw(io: CommandIo, text: string): void {
  io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

/**
 * What to do about a daemon that does not answer: where the URL came from, and how to start one.
 * A daemon that is there but slow needs no start command.
 */
function unreachableHint(err: DaemonUnreachableError, io: CommandIo): string {
  const from = io.argv.some((arg) => arg === '--url' || arg.startsWith('--url='))
    ? '--url'
    : nonEmpty(io.env.SWITCHBOARD_URL) !== undefined
      ? '$SWITCHBOARD_URL'
      : `the default; set --url or $SWITCHBOARD_URL for another`;
  if (err.reason.startsWith('no answer within')) return `switchboard: ${err.url} (from ${from}) did not answer in time; is the daemon busy or stuck?\n`;
  return (
    `switchboard: is the daemon running? Tried ${err.url} (from ${from}).\n` +
    `switchboard: start it with "switchboard serve" (or "npm start" in a clone of the repository), or point --url at the daemon's address\n`
  );
}

/** `a`, `a or b`, `a, b or c`. */
function orList(names: readonly string[]): string {
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]!}`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
