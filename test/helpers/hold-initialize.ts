import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from './process.js';

export interface InitializeHold {
  /**
   * Env for a stdio fixture: it holds its `initialize` answer while the hold lasts (a process:
   * fixtures/servers/lib/stdio.ts; one hosted in the worker: stdio-fixture-host.ts).
   */
  env: { HOLD_INITIALIZE_WHILE: string };
  /** Ends the hold: the server answers `initialize` now. */
  release(): Promise<void>;
  /** Holds again: servers started from here on wait for the next `release`. */
  engage(): Promise<void>;
}

/**
 * A server that connects when the test says so, instead of after a delay hoped to be longer than
 * the box is slow: the fixture holds `initialize` while a file exists, and `release` removes it.
 */
export async function holdInitialize(options: { engaged?: boolean } = {}): Promise<InitializeHold> {
  const file = join(await tempDir(), 'hold-initialize');
  const engage = (): Promise<void> => writeFile(file, '');
  if (options.engaged ?? true) await engage();
  return { env: { HOLD_INITIALIZE_WHILE: file }, release: () => rm(file, { force: true }), engage };
}
