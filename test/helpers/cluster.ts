import pg from 'pg';
import { migratePostgres } from '../../src/store/pg/pg-migrations.js';

/** Makes a fresh test database ready for replicas: the PostgreSQL store's schema, `replicas` table included. */
export async function prepareClusterDatabase(url: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await migratePostgres(pool);
  } finally {
    await pool.end();
  }
}
