/** `serve`'s command line: the flags, their checks, and the bind decision they lead to. */
import { parseArgs } from 'node:util';
import { errorMessage } from '../errors.js';
import { isLoopbackHost } from '../util/loopback.js';
import type { LogFormat } from '../logger.js';

const SERVE_OPTIONS = {
  config: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  cwd: { type: 'string' },
  'no-project-config': { type: 'boolean' },
  insecure: { type: 'boolean' },
  'log-format': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** A refusal or failure that ends `serve` with `exitCode` and a one-line `message`. */
export class ServeExit extends Error {
  readonly exitCode: number;

  constructor(exitCode: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ServeExit';
    this.exitCode = exitCode;
  }
}

export interface ServeFlags {
  config?: string;
  host?: string;
  port?: number;
  cwd?: string;
  noProjectConfig: boolean;
  insecure: boolean;
  /** @default "auto": pretty on a terminal, JSON when piped */
  logFormat?: LogFormat | 'auto';
  help: boolean;
}

/** Parses `serve` flags; bad input throws `ServeExit(2)`. */
export function parseServeFlags(argv: string[]): ServeFlags {
  const values = parseStrict(argv);
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!/^\d+$/.test(values.port) || port > 65_535) {
      throw new ServeExit(2, `invalid --port "${values.port}": expected an integer from 0 to 65535`);
    }
  }
  if (values.host === '') throw new ServeExit(2, 'invalid --host: must not be empty');
  const logFormat = values['log-format'];
  if (logFormat !== undefined && logFormat !== 'auto' && logFormat !== 'pretty' && logFormat !== 'json') {
    throw new ServeExit(2, `invalid --log-format "${logFormat}": expected auto, pretty or json`);
  }
  return {
    ...(values.config !== undefined ? { config: values.config } : {}),
    ...(values.host !== undefined ? { host: values.host } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(values.cwd !== undefined ? { cwd: values.cwd } : {}),
    noProjectConfig: values['no-project-config'] === true,
    insecure: values.insecure === true,
    ...(logFormat !== undefined ? { logFormat } : {}),
    help: values.help === true,
  };
}

function parseStrict(args: string[]) {
  try {
    return parseArgs({ args, options: SERVE_OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new ServeExit(2, errorMessage(err), { cause: err });
  }
}

/**
 * The bind decision: an unauthenticated daemon reachable from the network runs any tool of any
 * configured server for anyone, so that takes an explicit `--insecure`. Returns the refusal.
 */
export function bindRefusal(opts: { host: string; token?: string | undefined; insecure: boolean }): string | undefined {
  if (isLoopbackHost(opts.host) || opts.token || opts.insecure) return undefined;
  return `refusing to listen on non-loopback host "${opts.host}" without a token (set "token" in the config or SWITCHBOARD_TOKEN, or pass --insecure)`;
}
