import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { assertNoWarnings, warningLines, workerTrap } from '../helpers/warnings.js';

describe('process warnings fail the test run', () => {
  it('the worker trap sees a warning raised in this worker (and this test takes it back)', async () => {
    // Node still prints this one to stderr: it is the only warning a green run shows.
    const emitted = once(process, 'warning');
    process.emitWarning('emitted on purpose by test/unit/process-warnings.test.ts', 'ExpectedTestWarning');
    await emitted;
    const taken = workerTrap().take();
    expect(taken.map((w) => `${w.name}: ${w.message}`)).toEqual(['ExpectedTestWarning: emitted on purpose by test/unit/process-warnings.test.ts']);
    expect(() => assertNoWarnings(taken, 'test "x"')).toThrow(/^test "x" emitted 1 process warning\(s\):\n {2}ExpectedTestWarning: emitted on purpose/);
  });

  it('finds the warnings in a spawned process stderr', () => {
    const stderr = [
      '{"level":30,"msg":"listening"}',
      '(node:4242) MaxListenersExceededWarning: Possible EventTarget memory leak detected. 11 abort listeners added to [AbortSignal].',
      '(Use `node --trace-warnings ...` to show where the warning was created)',
      '(node:4242) [DEP0040] DeprecationWarning: The `punycode` module is deprecated.',
      'a line that mentions Warning: in passing',
    ].join('\n');
    expect(warningLines(stderr)).toEqual([
      '(node:4242) MaxListenersExceededWarning: Possible EventTarget memory leak detected. 11 abort listeners added to [AbortSignal].',
      '(node:4242) [DEP0040] DeprecationWarning: The `punycode` module is deprecated.',
    ]);
    expect(warningLines('no warnings here\n')).toEqual([]);
  });
});
