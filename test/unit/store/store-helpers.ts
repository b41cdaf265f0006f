import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished, vi } from 'vitest';
import type { StoreLogger } from '../../../src/store/db.js';

/** A fresh directory under the OS temp dir, removed when the current test ends. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-store-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A logger whose calls the test can inspect. */
export function spyLogger(): StoreLogger & { warn: ReturnType<typeof vi.fn>; debug: ReturnType<typeof vi.fn> } {
  return { warn: vi.fn(), debug: vi.fn() } as never;
}
