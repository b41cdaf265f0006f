import type pg from 'pg';
import { SchemaTooNewError, type Migration } from '../migrations.js';
import { holdConnection } from './held-connection.js';

/**
 * The PostgreSQL schema (issue #28), as an ordered, append-only list like the SQLite one in
 * ../migrations.ts: an applied migration is never edited, a change is a new entry. The tables
 * mirror SQLite's, with the same names and meanings; JSON stays `text` so a tool definition is
 * served back byte for byte (jsonb would reorder its keys).
 */
export const PG_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'create-stores',
    sql: `
      CREATE TABLE tool_cache (
        server         text    NOT NULL PRIMARY KEY,
        config_hash    text    NOT NULL,
        format_version integer NOT NULL,
        tools_json     text    NOT NULL,
        tool_count     integer NOT NULL,
        cached_at      bigint  NOT NULL,
        hints_json     text
      );
      CREATE TABLE protocol_verdict (
        server       text   NOT NULL PRIMARY KEY,
        config_hash  text   NOT NULL,
        verdict_json text   NOT NULL,
        probed_at    bigint NOT NULL
      );
      CREATE TABLE daemon_state (
        key        text   NOT NULL PRIMARY KEY,
        value      text   NOT NULL,
        updated_at bigint NOT NULL
      );
      CREATE TABLE tool_pin (
        server          text   NOT NULL,
        tool            text   NOT NULL,
        hash            text   NOT NULL,
        definition_json text   NOT NULL,
        pinned_at       bigint NOT NULL,
        PRIMARY KEY (server, tool)
      );
      CREATE TABLE oauth_client (
        server      text   NOT NULL,
        auth_hash   text   NOT NULL,
        issuer      text   NOT NULL,
        client_json text   NOT NULL,
        origin      text   NOT NULL,
        saved_at    bigint NOT NULL,
        PRIMARY KEY (server, auth_hash, issuer)
      );
      -- seq orders two saves of the same millisecond: "the tokens saved last" is the highest.
      CREATE TABLE oauth_token (
        server      text      NOT NULL,
        auth_hash   text      NOT NULL,
        issuer      text      NOT NULL,
        tokens_json text      NOT NULL,
        expires_at  bigint,
        saved_at    bigint    NOT NULL,
        seq         bigserial NOT NULL,
        PRIMARY KEY (server, auth_hash, issuer)
      );
      CREATE TABLE oauth_discovery (
        server       text   NOT NULL,
        auth_hash    text   NOT NULL,
        state_json   text,
        resource_url text,
        saved_at     bigint NOT NULL,
        PRIMARY KEY (server, auth_hash)
      );
      CREATE TABLE oauth_pending (
        state_hash    text   NOT NULL PRIMARY KEY,
        server        text   NOT NULL,
        auth_hash     text   NOT NULL,
        code_verifier text,
        created_at    bigint NOT NULL,
        expires_at    bigint NOT NULL
      );
      CREATE TABLE stored_credential (
        server   text   NOT NULL PRIMARY KEY,
        token    text   NOT NULL,
        saved_at bigint NOT NULL
      );
      CREATE TABLE agent (
        name          text   NOT NULL PRIMARY KEY,
        settings_json text   NOT NULL,
        created_at    bigint NOT NULL,
        revoked_at    bigint
      );
      CREATE TABLE agent_key (
        id         text   NOT NULL PRIMARY KEY,
        agent      text   NOT NULL,
        salt       bytea  NOT NULL,
        hash       bytea  NOT NULL,
        created_at bigint NOT NULL,
        revoked_at bigint
      );
      CREATE INDEX agent_key_by_agent ON agent_key (agent);
      CREATE TABLE audit_log (
        id           bigserial        PRIMARY KEY,
        ts           bigint           NOT NULL,
        agent        text,
        transport    text             NOT NULL,
        server       text             NOT NULL,
        kind         text             NOT NULL,
        name         text             NOT NULL,
        outcome      text             NOT NULL,
        code         text,
        duration_ms  double precision NOT NULL,
        arg_bytes    integer          NOT NULL,
        result_bytes integer          NOT NULL,
        args_json    text
      );
      CREATE INDEX audit_log_ts ON audit_log (ts);
      -- Replica heartbeats (issue #28 item 2): written and read by the cluster code.
      CREATE TABLE replicas (
        id           text   PRIMARY KEY,
        url          text   NOT NULL,
        started_at   bigint NOT NULL,
        heartbeat_at bigint NOT NULL,
        info         jsonb  NOT NULL DEFAULT '{}'
      );
    `,
  },
  {
    id: 2,
    name: 'create-budget-usage',
    // Token budgets per agent (issue #38 item 4), counted by every replica in the same rows.
    sql: `
      CREATE TABLE budget_usage (
        agent      text   NOT NULL,
        "window"   text   NOT NULL,
        tokens     bigint NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (agent, "window")
      );
      CREATE INDEX budget_usage_updated ON budget_usage (updated_at);
    `,
  },
  {
    id: 3,
    name: 'audit-run-id',
    // Code mode (issue #39): the calls a script made carry the run's id.
    sql: `ALTER TABLE audit_log ADD COLUMN run_id text;`,
  },
  {
    id: 4,
    name: 'create-rate-buckets',
    // Per-agent rate limits counted once for the cluster (issue #43 item 1): one bucket per agent.
    // Unlogged: a take writes no WAL (it is on the request path); after a crash of the database,
    // or on a standby it fails over to, the buckets start full again — a minute's burst, no more.
    sql: `
      CREATE UNLOGGED TABLE rate_buckets (
        agent       text             NOT NULL PRIMARY KEY,
        settings    text             NOT NULL,
        tokens      double precision NOT NULL,
        refilled_at bigint           NOT NULL,
        taken       boolean          NOT NULL
      );
    `,
  },
  {
    id: 5,
    name: 'create-tasks',
    // Gateway-run tasks (issue #41): any replica answers tasks/get from here.
    sql: `
      CREATE TABLE tasks (
        task_id    text   PRIMARY KEY,
        document   text   NOT NULL,
        expires_at bigint NOT NULL
      );
      CREATE INDEX tasks_expires ON tasks (expires_at);
    `,
  },
];

/** The advisory lock key every replica migrates under (any fixed 64-bit number; "switchbd"). */
export const MIGRATION_LOCK_KEY = 0x7377697463686264n;

/**
 * Applies the pending PostgreSQL migrations in one transaction, under a transaction-level
 * advisory lock: two replicas starting at once take turns, and the second finds nothing left
 * to do. Throws `SchemaTooNewError` when the database has migrations this version does not know
 * (a newer Switchboard migrated it): running on would misread its tables. Returns the ids applied.
 */
export async function migratePostgres(pool: pg.Pool, migrations: readonly Migration[] = PG_MIGRATIONS, now: () => number = Date.now): Promise<number[]> {
  const held = await holdConnection(pool);
  const { client } = held;
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    await client.query(`
      CREATE TABLE IF NOT EXISTS migrations (
        id         integer NOT NULL PRIMARY KEY,
        name       text    NOT NULL,
        applied_at bigint  NOT NULL
      )`);
    const applied = new Set((await client.query<{ id: number }>('SELECT id FROM migrations ORDER BY id')).rows.map((row) => Number(row.id)));
    const known = new Set(migrations.map((m) => m.id));
    const unknown = [...applied].filter((id) => !known.has(id));
    if (unknown.length > 0) throw new SchemaTooNewError(unknown);
    const pending = [...migrations].sort((a, b) => a.id - b.id).filter((m) => !applied.has(m.id));
    for (const migration of pending) {
      await client.query(migration.sql);
      await client.query('INSERT INTO migrations (id, name, applied_at) VALUES ($1, $2, $3)', [migration.id, migration.name, now()]);
    }
    await client.query('COMMIT');
    return pending.map((m) => m.id);
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    if (!(err instanceof SchemaTooNewError)) broken = err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    held.release(broken);
  }
}
