import type { FastifyBaseLogger } from 'fastify';
import { symbols, type Bindings, type ChildLoggerOptions, type LogFn } from 'pino';

/** fastify's own listen line: `Server listening at http://127.0.0.1:7337`, once per address. */
const FASTIFY_LISTEN_LINE = /^Server listening at /;

/**
 * The app's logger, minus fastify's own `Server listening at …` lines: `serve` logs the address
 * itself, once, with the URL agents use (fastify logs one line per address, two for `localhost`),
 * and "listening" twice in a row reads like two listeners. Everything else passes through.
 * fastify makes its own logger as a child of this one (and request loggers as children of that),
 * so children are wrapped too; the serialisers are exposed where fastify reads them, so ours (the
 * redacting `req`) keep winning over its defaults.
 */
export class ServerLogger implements FastifyBaseLogger {
  constructor(private readonly real: FastifyBaseLogger) {}

  get level(): string {
    return this.real.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  readonly info: LogFn = (...args: Parameters<LogFn>) => {
    if (typeof args[0] === 'string' && FASTIFY_LISTEN_LINE.test(args[0])) return;
    this.real.info(...args);
  };
  readonly fatal: LogFn = (...args: Parameters<LogFn>) => this.real.fatal(...args);
  readonly error: LogFn = (...args: Parameters<LogFn>) => this.real.error(...args);
  readonly warn: LogFn = (...args: Parameters<LogFn>) => this.real.warn(...args);
  readonly debug: LogFn = (...args: Parameters<LogFn>) => this.real.debug(...args);
  readonly trace: LogFn = (...args: Parameters<LogFn>) => this.real.trace(...args);
  readonly silent: LogFn = () => undefined;

  get [symbols.serializersSym](): unknown {
    return (this.real as unknown as Record<symbol, unknown>)[symbols.serializersSym];
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return new ServerLogger(this.real.child(bindings, options));
  }
}
