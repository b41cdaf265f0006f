import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { prettyDestination } from '../../src/log-pretty.js';

/** A stream that keeps what it was given, and fails every write once `broken`. */
function output(): { stream: Writable; written: string[]; calls: () => number; breakIt(): void } {
  const written: string[] = [];
  let broken = false;
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (broken) return done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      written.push(chunk.toString());
      done();
    },
  });
  // Every write handed to the stream, taken or not: a destroyed stream would drop them silently.
  let calls = 0;
  const write = stream.write.bind(stream) as (chunk: string) => boolean;
  stream.write = ((chunk: string) => {
    calls += 1;
    return write(chunk);
  }) as typeof stream.write;
  return { stream, written, calls: () => calls, breakIt: () => (broken = true) };
}

const LINE = JSON.stringify({ level: 30, time: 0, msg: 'hello' });

describe('prettyDestination', () => {
  it('listens once per stream, however many loggers write to it, and all stop writing once it fails', async () => {
    const { stream, written, calls, breakIt } = output();
    const first = prettyDestination(stream);
    const second = prettyDestination(stream);
    expect(stream.listenerCount('error')).toBe(1);
    first.write(LINE);
    expect(written).toEqual([expect.stringMatching(/INFO {2}hello\n$/)]);

    breakIt();
    const failed = new Promise((resolve) => stream.once('error', resolve));
    second.write(LINE);
    await failed;
    first.write(LINE);
    second.write(LINE);
    expect(written).toHaveLength(1);
    expect(calls()).toBe(2);
  });
});
