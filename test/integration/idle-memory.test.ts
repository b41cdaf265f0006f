import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { holdInitialize } from '../helpers/hold-initialize.js';
import { tempDir } from '../helpers/process.js';
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js';

/**
 * Issue #44 item 3: what an idle `switchboard serve` keeps resident, and the V8 settings its start
 * holds until ready (src/cli/lean-start.ts). A real daemon with a preload that reports on SIGUSR2
 * (test/helpers/idle-report-preload.mjs).
 */

const PRELOAD = pathToFileURL(fileURLToPath(new URL('../helpers/idle-report-preload.mjs', import.meta.url))).href;
const MIB = 1024 * 1024;

interface IdleReport {
  /** node's built-in modules loaded (`process.moduleLoadList`), e.g. `http`, `internal/http2/core`. */
  builtins: string[];
  /** V8's young generation when asked, and after ~24 MB of surviving objects, in bytes. */
  before: number;
  after: number;
  /** A function asked to be optimised now was compiled by TurboFan. */
  optimised: boolean;
  /** The same for the first report's function, asked again. */
  firstOptimised: boolean;
}

async function startDaemon(servers: Record<string, unknown> = {}): Promise<{ serve: ServeProcess; report: () => Promise<IdleReport> }> {
  const home = await tempDir();
  const configPath = join(home, 'switchboard.json');
  await writeFile(configPath, JSON.stringify({ dbPath: join(home, 'state.db'), startupGateMs: 60_000, mcpServers: servers }));
  const serve = spawnServe(['--config', configPath, '--port', '0', '--no-project-config'], {
    home,
    cwd: home,
    env: { NODE_OPTIONS: `--import=${PRELOAD}` },
  });
  let seq = 0;
  const report = async (): Promise<IdleReport> => {
    const next = (seq += 1);
    const entry = serve.waitForLog((e) => e.msg === 'idle-report' && e.seq === next);
    serve.child.kill('SIGUSR2');
    return (await entry) as unknown as IdleReport;
  };
  return { serve, report };
}

describe('an idle daemon', () => {
  it('keeps the young generation at its initial size through the start, and lets it grow once ready', { timeout: 60_000 }, async () => {
    const { serve, report } = await startDaemon();
    await serve.waitForLog((entry) => entry.msg === 'ready');
    const { before, after } = await report();
    // Two semi-spaces of 1 MiB (V8 grows them to 8 MiB each when a start's objects survive).
    expect(before).toBeLessThanOrEqual(2 * MIB);
    // After ready, V8's own growth again: a busy daemon is not held to the start's size.
    expect(after).toBeGreaterThan(before);
  });

  it('compiles nothing with TurboFan while it starts, and optimises as before once ready (what ran during the start too)', { timeout: 60_000 }, async () => {
    // One server holds its initialize, so the start (listening, not yet ready) lasts until released.
    const hold = await holdInitialize();
    const { serve, report } = await startDaemon({ held: fixtureServerConfig('echo-stdio', { env: hold.env }) });
    await serve.listening();
    const during = await report();
    expect(during.optimised).toBe(false);

    await hold.release();
    await serve.waitForLog((entry) => entry.msg === 'ready');
    const after = await report();
    expect(after.optimised).toBe(true);
    expect(after.firstOptimised).toBe(true);
  });

  it("has not loaded node:http2 (fastify's, for HTTP/2 servers only)", { timeout: 60_000 }, async () => {
    const { serve, report } = await startDaemon();
    await serve.waitForLog((entry) => entry.msg === 'ready');
    const { builtins } = await report();
    expect(builtins).toContain('http');
    expect(builtins.filter((name) => name.includes('http2'))).toEqual([]);
  });
});
