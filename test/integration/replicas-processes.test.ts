import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/process.js';
import { replicaCluster, type Replica } from '../helpers/replica-cluster.js';

/**
 * Issue #28, replicas as an operator runs them: `switchboard serve` processes with the same
 * config on one real PostgreSQL database. The second starts warm from the first's tool cache;
 * an agent key created or revoked on one replica counts on the other within a second; held tools
 * approved on one are served by the other within a second. Each replica runs its own servers.
 */

const SPAWN_TIMEOUT_MS = 60_000;

describe('replicas as separate serve processes on one PostgreSQL database', () => {
  it(
    "B starts warm from A's cache and runs its own server process; a key made (then revoked) on A counts on B and C within a second",
    async () => {
      // While this file exists the fixture holds its `initialize` answer: B's own server cannot
      // connect inside B's startup gate however idle the box, so B's catalogue must come from the cache.
      const hold = join(await tempDir(), 'hold-initialize');
      const replicas = await replicaCluster({ echo: fixtureServerConfig('echo-stdio', { env: { HOLD_INITIALIZE_WHILE: hold } }) });
      const a = await replicas.start();
      expect(a.ready).toMatchObject({ cacheHits: 0 });
      await writeFile(hold, '');
      const b = await replicas.start();
      // The tool list A wrote to the shared cache served B's catalogue at its startup gate.
      expect(b.ready).toMatchObject({ cacheHits: 1 });
      await rm(hold);

      // Each connects its own: B's catalogue came from the cache, its server process is its own.
      const pidOf = async (r: Replica): Promise<number | null> => (await r.json<{ pid: number | null }>('/servers/echo')).body.pid;
      await expect.poll(() => pidOf(b), { timeout: 10_000 }).toBeGreaterThan(0);
      const pids = [await pidOf(a), await pidOf(b)];
      expect(pids[0]).toBeGreaterThan(0);
      expect(pids[0]).not.toBe(pids[1]);

      const added = await a.json<{ key: string }>('/agents', { method: 'POST', body: { name: 'bot' } });
      expect(added.status).toBe(201);
      const key = added.body.key;
      // A third replica joins: it reads the agent from the store at its start.
      const c = await replicas.start();
      for (const r of [b, c]) await expect.poll(async () => (await r.json('/tools', { key })).status, { timeout: 1_000, interval: 50 }).toBe(200);

      expect((await a.json('/agents/bot', { method: 'DELETE' })).status).toBe(200);
      for (const r of [b, c]) {
        await expect.poll(async () => (await r.json<{ error?: { code: string } }>('/tools', { key })).body.error?.code, { timeout: 1_000, interval: 50 }).toBe('KEY_REVOKED');
      }
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'held tools approved on A are served by B within a second',
    async () => {
      const replicas = await replicaCluster({ pin: fixtureServerConfig('pinning') });
      const [a, b] = [await replicas.start(), await replicas.start()];
      const CHANGED = 'Now also uploads ~/.ssh somewhere';
      // Each replica's own `pinning` process changes its tool: both hold it.
      for (const r of [a, b]) {
        expect((await r.json('/tools/mcp_pin_mutate/call', { method: 'POST', body: { arguments: { description: CHANGED } } })).status).toBe(200);
        await expect.poll(async () => (await r.json<{ heldTools?: unknown[] }>('/servers/pin')).body.heldTools?.length ?? 0, { timeout: 5_000 }).toBe(1);
      }
      const names = async (r: Replica) => (await r.json<{ tools: Array<{ name: string; description: string }> }>('/tools')).body.tools;
      expect((await names(b)).map((t) => t.name)).not.toContain('mcp_pin_target');

      expect((await a.json('/servers/pin/tools/approve', { method: 'POST', body: { all: true } })).status).toBe(200);
      await expect.poll(async () => (await names(b)).find((t) => t.name === 'mcp_pin_target')?.description, { timeout: 1_000, interval: 50 }).toBe(CHANGED);
    },
    SPAWN_TIMEOUT_MS,
  );
});
