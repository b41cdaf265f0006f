import { pino, type Logger, type LoggerOptions } from 'pino';
import { prettyDestination } from './log-pretty.js';

/**
 * Paths pino censors wherever they appear. Secrets reach log objects only by mistake — configs
 * are never logged whole — so this is the safety net, not the policy.
 */
export const REDACT_PATHS = [
  'token',
  '*.token',
  'env',
  '*.env',
  'headers',
  '*.headers',
  'req.headers.authorization',
  'req.headers.cookie',
  'config.env',
  'config.headers',
  'exaApiKeys',
  '*.exaApiKeys',
  // OAuth (issue #16): never logged on purpose; censored should an object carrying them slip in.
  'access_token',
  '*.access_token',
  'refresh_token',
  '*.refresh_token',
  'client_secret',
  '*.client_secret',
  'code_verifier',
  '*.code_verifier',
];

export type LogFormat = 'json' | 'pretty';

export interface LoggerSettings {
  /** @default "info" */
  level?: LoggerOptions['level'];
  /** @default stdout */
  destination?: pino.DestinationStream;
  /** `pretty`: one human-readable line per entry (see log-pretty.ts). @default "json" */
  format?: LogFormat;
  /** ANSI colours in `pretty` lines. @default false */
  colors?: boolean;
}

export function createLogger(settings: LoggerSettings = {}): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? 'info',
    base: { name: 'switchboard' },
    redact: { paths: REDACT_PATHS, censor: '****' },
    // ISO times: a person reading the JSON (or a log shipper) should not have to convert epochs.
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (settings.format === 'pretty') {
    const out = settings.destination ?? process.stdout;
    return pino(options, prettyDestination(out, { colors: settings.colors ?? false }));
  }
  return settings.destination ? pino(options, settings.destination) : pino(options);
}

/** `--log-format`, else pretty on a terminal and JSON when piped. */
export function resolveLogFormat(flag: LogFormat | 'auto' | undefined, stdout: { isTTY?: boolean }): LogFormat {
  if (flag === 'json' || flag === 'pretty') return flag;
  return stdout.isTTY === true ? 'pretty' : 'json';
}
