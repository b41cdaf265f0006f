import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { LazyRequestLogger } from '../../../src/http/lazy-request-logger.js';

/** fastify's per-request logger, made only when a request logs (issue #17). */

function capture(): { logger: pino.Logger; lines: () => Array<Record<string, unknown>>; children: () => number } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = pino({ level: 'info', redact: ['secret'] }, stream);
  let children = 0;
  const child = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof logger.child>) => {
    children += 1;
    return child(...args);
  }) as typeof logger.child;
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    children: () => children,
  };
}

describe('LazyRequestLogger', () => {
  it('makes no child until the request logs, then logs with the bindings through the same child', () => {
    const { logger, lines, children } = capture();
    const lazy = new LazyRequestLogger(logger, { reqId: 'req-1' }, {});
    expect(lazy.level).toBe('info');
    lazy.debug('below the level');
    expect(children()).toBe(1);
    lazy.info({ secret: 'hunter2', code: 'X' }, 'first');
    lazy.warn('second');
    expect(children()).toBe(1);
    expect(lines().map(({ reqId, msg, secret, code }) => ({ reqId, msg, secret, code }))).toEqual([
      { reqId: 'req-1', msg: 'first', secret: '[Redacted]', code: 'X' },
      { reqId: 'req-1', msg: 'second', secret: undefined, code: undefined },
    ]);
  });

  it('makes no child for a request that never logs', () => {
    const { logger, children } = capture();
    const lazy = new LazyRequestLogger(logger, { reqId: 'req-2' }, {});
    void lazy.level;
    expect(children()).toBe(0);
  });
});
