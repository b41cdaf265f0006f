import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import pg from 'pg';
import { describe, it } from 'vitest';
import type { ReplicaTraffic } from '../../src/cluster/replica-traffic.js';
import type { ServerConfig } from '../../src/config/types.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { startReplica } from '../helpers/in-process-replica.js';
import { freshDatabaseUrl } from '../helpers/pg-stores.js';
import { tempDir, waitForFile } from '../helpers/process.js';

/**
 * Issue #43 item 6: `GET /status` on any replica shows every replica's traffic from its heartbeat
 * (calls and errors per second, totals, calls in flight, each server's concurrency limit) and
 * the live replicas' sum. Heartbeats raise no event, so the reads poll at 100 ms; the replicas beat
 * every 500 ms instead of 2 s, as what is tested is what a beat carries, not how often one comes.
 * The two tests run side by side (each its own database, replicas and temp dir), registering
 * their cleanups and asserting through their own context.
 */

/** Long enough that a busy box's late beat leaves a replica live (three intervals), short enough not to wait on. */
const HEARTBEAT_MS = 500;

interface ClusterStatus {
  replicas: Array<{ id: string; self: boolean; live: boolean; traffic: ReplicaTraffic | null }>;
  cluster: { replicas: number; live: number; callsPerSecond: number; errorsPerSecond: number; inFlight: number };
}

const POLL = { interval: 100, timeout: 15_000 };

async function clusterStatus(sb: TestDaemon): Promise<ClusterStatus> {
  return (await sb.json<ClusterStatus>('/status')).body;
}

async function selfId(sb: TestDaemon): Promise<string> {
  return (await clusterStatus(sb)).replicas.find((r) => r.self)?.id ?? '';
}

/** The traffic `viewer` shows for replica `id`. */
async function trafficOf(viewer: TestDaemon, id: string): Promise<ReplicaTraffic | null | undefined> {
  return (await clusterStatus(viewer)).replicas.find((r) => r.id === id)?.traffic;
}

describe.concurrent('the cluster view of GET /status', () => {
  it("shows each replica's calls, errors, in-flight calls and limits, and their sum, on every replica", async ({ expect, onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    const url = await freshDatabaseUrl(onTestFinished);
    const echo = fixtureServerConfig('echo-stdio');
    const gated = { ...fixtureServerConfig('gated', { env: { WORK_DIR: dir } }), maxConcurrentCalls: 3 };
    // Each replica runs only the servers it is called on: what C shows of A comes from A's
    // heartbeat, not from C's own servers (three fixture processes fewer to start).
    const options = (servers: Record<string, ServerConfig>) => ({ servers, heartbeatIntervalMs: HEARTBEAT_MS, cleanup: onTestFinished });
    const [a, b, c] = await Promise.all([startReplica(url, options({ echo, gated })), startReplica(url, options({ echo })), startReplica(url, options({}))]);
    const [idA, idB] = [await selfId(a), await selfId(b)];

    // A: 6 calls that answer and one held at the server; B: 2 calls.
    for (let i = 0; i < 6; i++) expect((await a.json('/tools/mcp_echo_echo/call', { method: 'POST', body: { arguments: { text: `a${i}` } } })).status).toBe(200);
    const held = a.json('/tools/mcp_gated_work/call', { method: 'POST', body: { arguments: { id: 'held' } } });
    await waitForFile(join(dir, 'order.log'));
    for (let i = 0; i < 2; i++) expect((await b.json('/tools/mcp_echo_add/call', { method: 'POST', body: { arguments: { a: i, b: 1 } } })).status).toBe(200);

    // C sees A's calls and the one in flight, with the limit in effect on each server.
    await expect.poll(() => trafficOf(c, idA), POLL).toMatchObject({ calls: 6, inFlight: 1 });
    const seenA = (await trafficOf(c, idA))!;
    expect(seenA.limits).toEqual(
      expect.arrayContaining([
        { server: 'gated', limit: 3, mode: 'fixed', inFlight: 1, queued: 0 },
        expect.objectContaining({ server: 'echo', mode: 'adaptive', inFlight: 0, queued: 0 }),
      ]),
    );
    await expect.poll(() => trafficOf(c, idB), POLL).toMatchObject({ calls: 2, errors: 0, inFlight: 0 });

    // The sum over the live replicas, on a replica that took no call itself.
    const status = await clusterStatus(c);
    expect(status.cluster).toMatchObject({ replicas: 3, live: 3, inFlight: 1 });
    const rates = status.replicas.reduce((sum, r) => sum + (r.traffic?.callsPerSecond ?? 0), 0);
    expect(status.cluster.callsPerSecond).toBeCloseTo(rates, 1);

    // The held call finishes: A's next beat counts it and nothing is in flight any more.
    await writeFile(join(dir, 'go-held'), '');
    expect((await held).status).toBe(200);
    await expect.poll(() => trafficOf(b, idA), POLL).toMatchObject({ calls: 7, inFlight: 0 });
    // A beat covering no calls says so: the rate falls back to 0.
    await expect.poll(async () => (await trafficOf(b, idA))?.callsPerSecond, POLL).toBe(0);
  });

  it('a replica told to beat every 500 ms counts another silent for 3 s as not live (under the 2 s default it still would be)', async ({ expect, onTestFinished }) => {
    const url = await freshDatabaseUrl(onTestFinished);
    const replica = await startReplica(url, { heartbeatIntervalMs: HEARTBEAT_MS, cleanup: onTestFinished });
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    onTestFinished(() => db.end());
    const silent = 'dead0000beef';
    await db.query("INSERT INTO replicas (id, url, started_at, heartbeat_at, info) VALUES ($1, 'http://127.0.0.1:9', $2, $2, '{}')", [silent, Date.now() - 3_000]);
    const { replicas, cluster } = await clusterStatus(replica);
    expect(replicas.find((r) => r.id === silent)).toMatchObject({ live: false });
    expect(cluster).toMatchObject({ replicas: 2, live: 1 });
  });
});
