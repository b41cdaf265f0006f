/**
 * Process warnings as test failures. A MaxListenersExceededWarning, an unhandled-rejection or a
 * deprecation warning is a bug the daemon would print in production (SPEC §4 forbids the first),
 * but Node only writes it to stderr, where a passing run hides it. The setup file
 * (test/setup/process-warnings.ts) turns every one into a failure of the test that caused it.
 */

export interface WarningTrap {
  /** Warnings seen since the last call, emptied. */
  take(): Error[];
  /** Stops listening. */
  dispose(): void;
}

/** Collects every `process.on('warning')` from now on. */
export function trapWarnings(): WarningTrap {
  const seen: Error[] = [];
  const onWarning = (warning: Error): void => void seen.push(warning);
  process.on('warning', onWarning);
  return {
    take: () => seen.splice(0),
    dispose: () => void process.off('warning', onWarning),
  };
}

const KEY = Symbol.for('switchboard.test.warningTrap');

/**
 * The worker's one trap, which the setup file checks after every test. A test that emits a
 * warning on purpose takes it from here, so that it does not count as a failure.
 */
export function workerTrap(): WarningTrap {
  const holder = globalThis as typeof globalThis & { [KEY]?: WarningTrap };
  return (holder[KEY] ??= trapWarnings());
}

/** Throws one error naming every warning, or does nothing when there are none. */
export function assertNoWarnings(warnings: readonly Error[], where: string): void {
  if (warnings.length === 0) return;
  const lines = warnings.map((warning) => `  ${warning.name}: ${warning.message}`);
  throw new Error(`${where} emitted ${warnings.length} process warning(s):\n${lines.join('\n')}`);
}

/**
 * Node prints a child process's warnings to its stderr as `(node:<pid>) <Name>Warning: <text>`
 * (followed by a hint line). Returns those lines, for the processes the tests spawn.
 */
export function warningLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => /^\(node:\d+\) (?:\[[A-Z0-9_]+\] )?\w*Warning: /.test(line));
}
