import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/process.js';
import { spawnServe } from '../helpers/serve-process.js';

/**
 * Issue #44 item 3: what an idle `switchboard serve` keeps resident. A real daemon with a preload
 * that reports V8's young generation on SIGUSR2 (test/helpers/heap-space-preload.mjs).
 */

const PRELOAD = pathToFileURL(fileURLToPath(new URL('../helpers/heap-space-preload.mjs', import.meta.url))).href;
const MIB = 1024 * 1024;

describe('an idle daemon', () => {
  it('keeps the young generation at its initial size through the start, and lets it grow once ready', { timeout: 60_000 }, async () => {
    const home = await tempDir();
    const configPath = join(home, 'switchboard.json');
    await writeFile(configPath, JSON.stringify({ dbPath: join(home, 'state.db'), mcpServers: {} }));
    const serve = spawnServe(['--config', configPath, '--port', '0', '--no-project-config'], {
      home,
      cwd: home,
      env: { NODE_OPTIONS: `--import=${PRELOAD}` },
    });
    await serve.waitForLog((entry) => entry.msg === 'ready');

    const report = serve.waitForLog((entry) => entry.msg === 'heap-space');
    serve.child.kill('SIGUSR2');
    const { before, after } = (await report) as unknown as { before: number; after: number };
    // Two semi-spaces of 1 MiB (V8 grows them to 8 MiB each when a start's objects survive).
    expect(before).toBeLessThanOrEqual(2 * MIB);
    // After ready, V8's own growth again: a busy daemon is not held to the start's size.
    expect(after).toBeGreaterThan(before);
  });
});
