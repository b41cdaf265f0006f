import pg from 'pg';
import { pino } from 'pino';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { ClusterChannel, type ClusterMessage } from '../../src/cluster/cluster-channel.js';
import { deferred } from '../../src/util/deferred.js';
import { createDatabase } from '../helpers/postgres-server.js';

/**
 * The replicas' LISTEN/NOTIFY channel (issue #28 item 2) against a real PostgreSQL: messages
 * reach the other replicas and not the sender, in order; a listening connection the server cuts
 * (as when the database restarts) comes back by itself and says so, so the replica can re-read
 * what it missed; a payload too large for NOTIFY is dropped with a warning, not thrown.
 */

const silent = pino({ level: 'silent' });

async function channels(n: number): Promise<{ url: string; list: ClusterChannel[] }> {
  const db = await createDatabase(inject('postgresUrl'));
  onTestFinished(() => db.drop());
  const list = Array.from({ length: n }, (_, i) => new ClusterChannel({ connectionString: db.url, replicaId: `replica${i}`, logger: silent }));
  onTestFinished(async () => {
    await Promise.all(list.map((c) => c.close()));
  });
  await Promise.all(list.map((c) => c.start()));
  return { url: db.url, list };
}

function collect(channel: ClusterChannel): ClusterMessage[] {
  const seen: ClusterMessage[] = [];
  channel.onMessage((m) => seen.push(m));
  return seen;
}

describe('cluster channel', () => {
  it('delivers a message to every other replica, in order, and not back to its sender', async () => {
    const { list } = await channels(3);
    const [a, b, c] = list as [ClusterChannel, ClusterChannel, ClusterChannel];
    const [atA, atB, atC] = [collect(a), collect(b), collect(c)];
    for (let i = 0; i < 5; i += 1) void a.send({ kind: 'test', n: i });
    await a.send({ kind: 'test', n: 5 });
    await expect.poll(() => atC.length, { timeout: 2_000 }).toBe(6);
    await expect.poll(() => atB.length, { timeout: 2_000 }).toBe(6);
    expect(atB.map((m) => m.n)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(atB[0]).toMatchObject({ from: 'replica0', kind: 'test' });
    expect(atA).toEqual([]);
  });

  it('comes back after its connection is cut, says so, and hears messages again', async () => {
    const { url, list } = await channels(2);
    const [a, b] = list as [ClusterChannel, ClusterChannel];
    const atB = collect(b);
    const back = deferred<void>();
    b.onReconnect(() => back.resolve());

    // Every connection listening on the channel is ended by the server, as a restart would.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    onTestFinished(() => admin.end());
    const { rows } = await admin.query<{ n: number }>(
      "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'",
    );
    expect(rows[0]!.n).toBe(2);

    await back.promise;
    expect(b.listening).toBe(true);
    // Sent after the cut, heard by the listener that came back.
    await expect
      .poll(
        async () => {
          await a.send({ kind: 'after' });
          return atB.some((m) => m.kind === 'after');
        },
        { timeout: 5_000, interval: 200 },
      )
      .toBe(true);
  });

  it('drops a payload too large for NOTIFY with a warning, and goes on', async () => {
    const { list } = await channels(2);
    const [a, b] = list as [ClusterChannel, ClusterChannel];
    const atB = collect(b);
    await a.send({ kind: 'big', blob: 'x'.repeat(10_000) });
    await a.send({ kind: 'small' });
    await expect.poll(() => atB.map((m) => m.kind), { timeout: 2_000 }).toEqual(['small']);
  });
});
