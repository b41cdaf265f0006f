import { pino, type Logger, type LoggerOptions } from 'pino';

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

export interface LoggerSettings {
  /** @default "info" */
  level?: LoggerOptions['level'];
  /** @default stdout */
  destination?: pino.DestinationStream;
}

export function createLogger(settings: LoggerSettings = {}): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? 'info',
    base: { name: 'switchboard' },
    redact: { paths: REDACT_PATHS, censor: '****' },
  };
  return settings.destination ? pino(options, settings.destination) : pino(options);
}
