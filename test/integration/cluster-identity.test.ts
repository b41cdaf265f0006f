import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { startReplica } from '../helpers/in-process-replica.js';
import { freshDatabaseUrl } from '../helpers/pg-stores.js';
import { replicaCluster, TOKEN } from '../helpers/replica-cluster.js';

/**
 * Issue #43 items 4–5 with replicas on one real PostgreSQL database: a cluster without a `token`
 * has one operator key, in the shared store, that every replica accepts (`switchboard serve`
 * processes: each keeps the key in a file beside its database, as `serve` does); each replica has
 * an instance id of its own and the cluster one id, and a replica refuses a link to a replica of
 * its own cluster as a loop (daemons in this process: test/helpers/in-process-replica.ts).
 */

const SPAWN_TIMEOUT_MS = 60_000;

interface Status {
  instance: { id: string; label: string; cluster?: string };
  servers: Array<{ name: string; status: string; lastError: { code: string; message: string } | null }>;
}

// The two tests run side by side (each its own database; serve processes in one, daemons in this
// process in the other), registering their cleanups and asserting through their own context.
describe.concurrent('one cluster, one operator key, one identity per replica', () => {
  it(
    'no token: two replicas starting at once make one operator key, and the key one replica printed opens every replica',
    async ({ expect, onTestFinished }) => {
      const replicas = await replicaCluster({}, { token: null, cleanup: onTestFinished });
      const [a, b] = await Promise.all([replicas.start(), replicas.start()]);
      const c = await replicas.start();

      // The first agent: from now on every request needs a key, the operator's too.
      const added = await a.json<{ notice?: { operatorKeyFile?: string } }>('/agents', { method: 'POST', body: { name: 'bot' } });
      expect(added.status).toBe(201);
      const keyFile = join(a.dir, 'operator.key');
      expect(JSON.stringify(added.body)).toContain(keyFile);
      const key = (await readFile(keyFile, 'utf8')).trim();
      expect(key).toMatch(/^sbo_/);
      expect((await a.json('/status', { key })).status).toBe(200);

      for (const replica of [b, c]) {
        // The agent reaches the replica (the relayed agent.changed): keys are required there now. A
        // deadline, not a measure: a NOTIFY is read within milliseconds, but a replica process at
        // load 7+ took longer than the 2 s once allowed (seen failing by waits1).
        await expect.poll(async () => (await replica.json('/status')).status, { timeout: 10_000, interval: 50 }).toBe(401);
        expect((await replica.json('/status', { key })).status).toBe(200);
        // The same key beside its own database, for the CLI on its machine.
        expect((await readFile(join(replica.dir, 'operator.key'), 'utf8')).trim()).toBe(key);
      }
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "each replica has its own instance id and the cluster's id; A linking to B of its own cluster is refused as a loop",
    async ({ expect, onTestFinished }) => {
      // Not about a replica's process: two daemons in this process, made as `serve` makes them.
      const dbUrl = await freshDatabaseUrl(onTestFinished);
      const b = await startReplica(dbUrl, { servers: { echo: fixtureServerConfig('echo-stdio') }, config: { token: TOKEN }, cleanup: onTestFinished });
      const a = await startReplica(dbUrl, {
        servers: { peer: { type: 'http', url: `${b.url}/mcp`, headers: { authorization: `Bearer ${TOKEN}` } } },
        config: { token: TOKEN },
        cleanup: onTestFinished,
      });

      const [sa, sb] = [(await a.json<Status>('/status')).body, (await b.json<Status>('/status')).body];
      expect(sa.instance.id).not.toBe(sb.instance.id);
      expect(sa.instance.cluster).toEqual(expect.any(String));
      expect(sa.instance.cluster).toBe(sb.instance.cluster);

      await expect
        .poll(async () => (await a.json<Status>('/status')).body.servers.find((s) => s.name === 'peer')?.lastError?.code, { timeout: 10_000, interval: 100 })
        .toBe('LOOP_DETECTED');
      const peer = (await a.json<Status>('/status')).body.servers.find((s) => s.name === 'peer');
      expect(peer?.lastError?.message).toContain('a replica of this cluster');
      expect(peer?.status).not.toBe('connected');
    },
    SPAWN_TIMEOUT_MS,
  );
});
