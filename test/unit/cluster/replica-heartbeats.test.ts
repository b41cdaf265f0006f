import type pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ReplicaHeartbeats } from '../../../src/cluster/replica-heartbeats.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { freshDatabaseUrl, postgresStores } from '../../helpers/pg-stores.js';

/**
 * Where a forwarded request goes (issue #43, found by the B15 soak): a replica answers `find`
 * from the list it read within the last half interval, on the real PostgreSQL `replicas` table.
 * The clock is manual and does not move, so every list read stays "fresh" for the whole test.
 */

const quiet = { warn: () => undefined, info: () => undefined };

async function replica(id: string, pool: pg.Pool, clock: ManualClock): Promise<ReplicaHeartbeats> {
  const heartbeats = new ReplicaHeartbeats({ pool, id, url: () => `http://127.0.0.1/${id}`, view: () => [], logger: quiet, now: () => clock.now() });
  await heartbeats.start();
  onTestFinished(() => heartbeats.stop());
  return heartbeats;
}

describe('replica heartbeats: finding the owner of a forwarded request', () => {
  it('finds a replica that started after the last list was read (its first sessions are not answered 404), without a read for a replica the list holds', async () => {
    const { pool } = await postgresStores({ url: await freshDatabaseUrl() });
    const clock = new ManualClock();
    const b = await replica('b00000000000', pool!, clock);
    expect((await b.list()).map((r) => r.id)).toEqual(['b00000000000']);

    // C starts (its first beat written) less than half an interval after B read the list.
    await replica('c00000000000', pool!, clock);
    expect(await b.find('c00000000000')).toMatchObject({ id: 'c00000000000', live: true });

    // An id B's fresh list holds is answered from it: C's row gone, B still finds C.
    await pool!.query("DELETE FROM replicas WHERE id = 'c00000000000'");
    expect(await b.find('c00000000000')).toMatchObject({ id: 'c00000000000' });
    // One that was never there is not found.
    expect(await b.find('d00000000000')).toBeUndefined();
  });
});
