import { prepareCluster } from '../../src/cluster/join-cluster.js';
import { startDaemon, type StartDaemonOptions, type TestDaemon } from './daemon.js';
import { postgresStores } from './pg-stores.js';

/**
 * A replica in this process, as `serve` makes one: the PostgreSQL stores on `url` and the
 * cluster on the same database (heartbeats, channel), then the test daemon with `options`.
 */
export async function startReplica(url: string, options: Omit<StartDaemonOptions, 'deps'> & { deps?: Omit<NonNullable<StartDaemonOptions['deps']>, 'stores' | 'cluster'> } = {}): Promise<TestDaemon> {
  const stores = await postgresStores({ url });
  const cluster = await prepareCluster({ connectionString: url, pool: stores.pool!, state: stores.state });
  return startDaemon({ ...options, deps: { ...options.deps, stores, cluster } });
}
