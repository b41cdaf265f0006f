import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LogFn } from 'pino';

/**
 * fastify gives every request a child logger bound to its request id. Making a pino child runs
 * the bindings through the redaction and serialisers, which was a measurable share of a tool
 * call's CPU (issue #17), while most requests never log a line. This stand-in has the child made
 * on its first use; a request that logs gets exactly the child fastify would have made.
 */
export class LazyRequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  #real(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#child?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  readonly fatal: LogFn = (...args: Parameters<LogFn>) => this.#real().fatal(...args);
  readonly error: LogFn = (...args: Parameters<LogFn>) => this.#real().error(...args);
  readonly warn: LogFn = (...args: Parameters<LogFn>) => this.#real().warn(...args);
  readonly info: LogFn = (...args: Parameters<LogFn>) => this.#real().info(...args);
  readonly debug: LogFn = (...args: Parameters<LogFn>) => this.#real().debug(...args);
  readonly trace: LogFn = (...args: Parameters<LogFn>) => this.#real().trace(...args);
  readonly silent: LogFn = () => undefined;

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/** A fastify `childLoggerFactory` that hands out `LazyRequestLogger`s. */
export function lazyChildLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyRequestLogger(logger, bindings, options);
}
