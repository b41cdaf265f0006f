import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/process.js';
import { spawnServe } from '../helpers/serve-process.js';

/**
 * Issue #44 item 3: what an idle `switchboard serve` keeps resident. A real daemon with a preload
 * that reports on SIGUSR2 (test/helpers/idle-report-preload.mjs).
 */

const PRELOAD = pathToFileURL(fileURLToPath(new URL('../helpers/idle-report-preload.mjs', import.meta.url))).href;
const MIB = 1024 * 1024;

interface IdleReport {
  /** node's built-in modules loaded (`process.moduleLoadList`), e.g. `http`, `internal/http2/core`. */
  builtins: string[];
  /** V8's young generation when asked, and after ~24 MB of surviving objects, in bytes. */
  before: number;
  after: number;
}

/** An empty daemon, ready; then what the preload reports. */
async function idleReport(): Promise<IdleReport> {
  const home = await tempDir();
  const configPath = join(home, 'switchboard.json');
  await writeFile(configPath, JSON.stringify({ dbPath: join(home, 'state.db'), mcpServers: {} }));
  const serve = spawnServe(['--config', configPath, '--port', '0', '--no-project-config'], {
    home,
    cwd: home,
    env: { NODE_OPTIONS: `--import=${PRELOAD}` },
  });
  await serve.waitForLog((entry) => entry.msg === 'ready');
  const report = serve.waitForLog((entry) => entry.msg === 'idle-report');
  serve.child.kill('SIGUSR2');
  return (await report) as unknown as IdleReport;
}

describe('an idle daemon', () => {
  it('keeps the young generation at its initial size through the start, and lets it grow once ready', { timeout: 60_000 }, async () => {
    const { before, after } = await idleReport();
    // Two semi-spaces of 1 MiB (V8 grows them to 8 MiB each when a start's objects survive).
    expect(before).toBeLessThanOrEqual(2 * MIB);
    // After ready, V8's own growth again: a busy daemon is not held to the start's size.
    expect(after).toBeGreaterThan(before);
  });

  it("has not loaded node:http2 (fastify's, for HTTP/2 servers only)", { timeout: 60_000 }, async () => {
    const { builtins } = await idleReport();
    expect(builtins).toContain('http');
    expect(builtins.filter((name) => name.includes('http2'))).toEqual([]);
  });
});
