import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/process.js';
import { spawnServe } from '../helpers/serve-process.js';
import { waitForStatus } from '../helpers/status-watch.js';
import { freePort } from '../helpers/free-port.js';

/**
 * Issue #11 item 2: the README's own agent entry pasted into `~/.claude.json` must not make the
 * daemon aggregate itself — not at start, not after any number of reloads.
 */

async function json<T>(url: string, init?: RequestInit): Promise<T> {
  const response = await fetch(url, init);
  expect(response.status, url).toBe(200);
  return (await response.json()) as T;
}

interface Status {
  toolCount: number;
  servers: Array<{ name: string; status: string }>;
  discovery: { skipped: Array<{ name: string; reason: string; message: string; source: { provider: string } }> };
}

describe('self-reference guard (real daemon process)', () => {
  it.each([
    ['127.0.0.1', (port: number) => `http://127.0.0.1:${port}/mcp`],
    ['localhost', (port: number) => `http://localhost:${port}/mcp`],
  ])('skips the README agent entry (%s) at start and across three reloads', async (_label, urlFor) => {
    const home = await tempDir();
    const cwd = await tempDir();
    const port = await freePort();
    const echo = fixtureServerConfig('echo-stdio');
    await writeFile(join(home, '.claude.json'), JSON.stringify({ mcpServers: { switchboard: { type: 'http', url: urlFor(port) }, echo } }));
    const configPath = join(home, 'switchboard.json');
    await writeFile(configPath, JSON.stringify({ dbPath: join(home, 'cache.db') }));

    const serve = spawnServe(['--config', configPath, '--port', String(port)], { home, cwd });
    const base = await serve.listening();
    await serve.waitForLog((entry) => entry.msg === 'ready');

    const counts: number[] = [];
    for (let round = 0; round <= 3; round++) {
      if (round > 0) await json(`${base}/reload`, { method: 'POST' });
      // A reload answers at the startup gate; the echo server may still be finishing (deferred).
      const status = await waitForStatus<Status>(base, (s) => s.servers.every((server) => server.status === 'connected'));
      counts.push(status.toolCount);
      expect(status.servers.map((s) => [s.name, s.status])).toEqual([['echo', 'connected']]);
      expect(status.discovery.skipped).toEqual([expect.objectContaining({ name: 'switchboard', reason: 'self', message: 'points at this Switchboard itself' })]);
      const tools = await json<{ tools: Array<{ name: string }> }>(`${base}/tools`);
      expect(tools.tools.map((t) => t.name)).toEqual(['mcp_echo_add', 'mcp_echo_echo', 'mcp_echo_reverse']);
    }
    // The same count as the echo server alone gives, every time.
    expect(counts).toEqual([3, 3, 3, 3]);
    // Logged once, not once per reload.
    const skips = serve.entries().filter((entry) => entry.msg === 'server skipped: points at this Switchboard itself');
    expect(skips.map((entry) => entry.server)).toEqual(['switchboard']);
  });
});
