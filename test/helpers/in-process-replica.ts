import { prepareCluster } from '../../src/cluster/join-cluster.js';
import { startDaemon, type StartDaemonOptions, type TestDaemon } from './daemon.js';
import { postgresStores } from './pg-stores.js';
import type { Cleanup } from './process.js';

export type ReplicaOptions = Omit<StartDaemonOptions, 'deps' | 'lifetime'> & {
  deps?: Omit<NonNullable<StartDaemonOptions['deps']>, 'stores' | 'cluster'>;
  /**
   * Where the replica's closing goes (the daemon, then its stores): e.g. a `cleanupStack()` of
   * replicas a file's tests share. @default the test's own end
   */
  cleanup?: Cleanup;
  /**
   * How often the replica writes its heartbeat, for a test that waits on what a beat carries
   * (servers' statuses, traffic). Keep it ≥ 500 ms: a replica silent three intervals is not live,
   * and a busy box delays a beat. @default the daemon's (2 s)
   */
  heartbeatIntervalMs?: number;
};

/**
 * A replica in this process, as `serve` makes one: the PostgreSQL stores on `url` and the
 * cluster on the same database (heartbeats, channel), then the test daemon with `options`.
 */
export async function startReplica(url: string, options: ReplicaOptions = {}): Promise<TestDaemon> {
  const { cleanup, heartbeatIntervalMs, ...rest } = options;
  // The stores' close is registered first, so (last in, first out) it runs after the daemon's.
  const stores = await postgresStores({ url, ...(cleanup ? { cleanup } : {}) });
  const prepared = await prepareCluster({ connectionString: url, pool: stores.pool!, state: stores.state });
  const cluster = heartbeatIntervalMs === undefined ? prepared : { ...prepared, heartbeatIntervalMs };
  const daemon = await startDaemon({ ...rest, deps: { ...rest.deps, stores, cluster }, ...(cleanup ? { lifetime: 'manual' } : {}) });
  cleanup?.(() => daemon.close());
  return daemon;
}
