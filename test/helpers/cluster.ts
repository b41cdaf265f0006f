import pg from 'pg';

/**
 * Makes a fresh test database ready for replicas: the table the heartbeats write.
 * TODO(merge): replaced by the PostgreSQL store's migrations once they land.
 */
export async function prepareClusterDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS replicas (id text PRIMARY KEY, url text NOT NULL, started_at bigint NOT NULL, heartbeat_at bigint NOT NULL, info jsonb NOT NULL DEFAULT '{}')`);
  } finally {
    await client.end();
  }
}
