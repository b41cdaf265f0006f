import type { Database } from 'better-sqlite3';

/**
 * The schema, as an ordered list of migrations. Append only: an applied migration is never
 * edited, a change is a new entry with the next id. The `migrations` table records what a
 * file has, so reopening applies only what is missing.
 */
export interface Migration {
  /** Strictly increasing, starting at 1. */
  id: number;
  /** kebab-case, for humans reading the `migrations` table. */
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'create-tool-cache',
    sql: `
      CREATE TABLE tool_cache (
        server         TEXT    NOT NULL PRIMARY KEY,
        config_hash    TEXT    NOT NULL,
        format_version INTEGER NOT NULL,
        tools_json     TEXT    NOT NULL,
        tool_count     INTEGER NOT NULL,
        cached_at      INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    id: 2,
    name: 'create-daemon-state',
    sql: `
      CREATE TABLE daemon_state (
        key        TEXT    NOT NULL PRIMARY KEY,
        value      TEXT    NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    id: 3,
    name: 'add-protocol-verdicts-and-list-hints',
    sql: `
      CREATE TABLE protocol_verdict (
        server       TEXT    NOT NULL PRIMARY KEY,
        config_hash  TEXT    NOT NULL,
        verdict_json TEXT    NOT NULL,
        probed_at    INTEGER NOT NULL
      ) STRICT;
      ALTER TABLE tool_cache ADD COLUMN hints_json TEXT;
    `,
  },
  {
    id: 4,
    name: 'create-oauth-store',
    // Everything an OAuth upstream needs between runs (issue #16). `auth_hash` is the hash of the
    // settings a sign-in depends on (see oauth-store.ts); `state_hash` keeps the callback's
    // single-use `state` out of the file.
    sql: `
      CREATE TABLE oauth_client (
        server      TEXT    NOT NULL,
        auth_hash   TEXT    NOT NULL,
        issuer      TEXT    NOT NULL,
        client_json TEXT    NOT NULL,
        origin      TEXT    NOT NULL,
        saved_at    INTEGER NOT NULL,
        PRIMARY KEY (server, auth_hash, issuer)
      ) STRICT;
      CREATE TABLE oauth_token (
        server      TEXT    NOT NULL,
        auth_hash   TEXT    NOT NULL,
        issuer      TEXT    NOT NULL,
        tokens_json TEXT    NOT NULL,
        expires_at  INTEGER,
        saved_at    INTEGER NOT NULL,
        PRIMARY KEY (server, auth_hash, issuer)
      ) STRICT;
      CREATE TABLE oauth_discovery (
        server       TEXT    NOT NULL,
        auth_hash    TEXT    NOT NULL,
        state_json   TEXT,
        resource_url TEXT,
        saved_at     INTEGER NOT NULL,
        PRIMARY KEY (server, auth_hash)
      ) STRICT;
      CREATE TABLE oauth_pending (
        state_hash    TEXT    NOT NULL PRIMARY KEY,
        server        TEXT    NOT NULL,
        auth_hash     TEXT    NOT NULL,
        code_verifier TEXT,
        created_at    INTEGER NOT NULL,
        expires_at    INTEGER NOT NULL
      ) STRICT;
      CREATE TABLE stored_credential (
        server   TEXT    NOT NULL PRIMARY KEY,
        token    TEXT    NOT NULL,
        saved_at INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    id: 5,
    name: 'create-agents',
    // Agents created with `switchboard agents add` and every key issued (issue #22). A key is kept
    // only as a salted SHA-256 of its secret part; a revoked key keeps its row so it is told apart
    // from a key that never existed.
    sql: `
      CREATE TABLE agent (
        name          TEXT    NOT NULL PRIMARY KEY,
        settings_json TEXT    NOT NULL,
        created_at    INTEGER NOT NULL,
        revoked_at    INTEGER
      ) STRICT;
      CREATE TABLE agent_key (
        id         TEXT    NOT NULL PRIMARY KEY,
        agent      TEXT    NOT NULL,
        salt       BLOB    NOT NULL,
        hash       BLOB    NOT NULL,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      ) STRICT;
      CREATE INDEX agent_key_by_agent ON agent_key (agent);
    `,
  },
  {
    id: 6,
    name: 'create-audit-log',
    // Issue #22 item 4. `ts` and `id` are indexed for the retention trim and newest-first reads.
    sql: `
      CREATE TABLE audit_log (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        ts           INTEGER NOT NULL,
        agent        TEXT,
        transport    TEXT    NOT NULL,
        server       TEXT    NOT NULL,
        kind         TEXT    NOT NULL,
        name         TEXT    NOT NULL,
        outcome      TEXT    NOT NULL,
        code         TEXT,
        duration_ms  REAL    NOT NULL,
        arg_bytes    INTEGER NOT NULL,
        result_bytes INTEGER NOT NULL,
        args_json    TEXT
      ) STRICT;
      CREATE INDEX audit_log_ts ON audit_log (ts);
    `,
  },
  {
    id: 7,
    name: 'create-tool-pins',
    // Tool pinning (issue #22): the hash of each tool definition a server's tools were served
    // with, and that definition, so a changed tool is held across restarts and its change shown.
    sql: `
      CREATE TABLE tool_pin (
        server          TEXT    NOT NULL,
        tool            TEXT    NOT NULL,
        hash            TEXT    NOT NULL,
        definition_json TEXT    NOT NULL,
        pinned_at       INTEGER NOT NULL,
        PRIMARY KEY (server, tool)
      ) STRICT;
    `,
  },
  {
    id: 8,
    name: 'create-budget-usage',
    // Token budgets per agent (issue #38 item 4): tokens handed to each agent per hour and per day.
    sql: `
      CREATE TABLE budget_usage (
        agent      TEXT    NOT NULL,
        window     TEXT    NOT NULL,
        tokens     INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (agent, window)
      ) STRICT;
      CREATE INDEX budget_usage_updated ON budget_usage (updated_at);
    `,
  },
  {
    id: 9,
    name: 'audit-run-id',
    // Code mode (issue #39): the calls a script made carry the run's id.
    sql: `ALTER TABLE audit_log ADD COLUMN run_id TEXT;`,
  },
  {
    id: 10,
    name: 'create-tasks',
    // Gateway-run tasks (issue #41): kept with their outcome for their TTL, across a restart.
    sql: `
      CREATE TABLE tasks (
        task_id    TEXT    PRIMARY KEY,
        document   TEXT    NOT NULL,
        expires_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX tasks_expires ON tasks (expires_at);
    `,
  },
];

/** The file was written by a newer Switchboard: its schema has migrations we don't know. */
export class SchemaTooNewError extends Error {
  constructor(readonly unknownIds: number[]) {
    super(`the database has migrations this version does not know (${unknownIds.join(', ')})`);
    this.name = 'SchemaTooNewError';
  }
}

export interface MigrationState {
  applied: number[];
  pending: Migration[];
  /** Ids in the file that are not in the list: a newer schema. */
  unknown: number[];
}

/** Reads which migrations a database has, without writing (works on a read-only connection). */
export function migrationState(db: Database, migrations: readonly Migration[] = MIGRATIONS): MigrationState {
  const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'").get();
  const applied = hasTable ? (db.prepare('SELECT id FROM migrations ORDER BY id').pluck().all() as number[]) : [];
  const appliedSet = new Set(applied);
  const known = new Set(migrations.map((m) => m.id));
  return {
    applied,
    pending: migrations.filter((m) => !appliedSet.has(m.id)),
    unknown: applied.filter((id) => !known.has(id)),
  };
}

/**
 * Applies the pending migrations in order, all in one transaction: a failure leaves the file
 * exactly as it was, never half-migrated. Returns the ids applied. Throws `SchemaTooNewError`
 * rather than guess at a schema from the future.
 */
export function applyMigrations(db: Database, migrations: readonly Migration[] = MIGRATIONS, now: () => number = Date.now): number[] {
  const ordered = [...migrations].sort((a, b) => a.id - b.id);
  const run = db.transaction((): number[] => {
    db.exec(`
      CREATE TABLE IF NOT EXISTS migrations (
        id         INTEGER NOT NULL PRIMARY KEY,
        name       TEXT    NOT NULL,
        applied_at INTEGER NOT NULL
      ) STRICT;
    `);
    const state = migrationState(db, ordered);
    if (state.unknown.length > 0) throw new SchemaTooNewError(state.unknown);
    const record = db.prepare('INSERT INTO migrations (id, name, applied_at) VALUES (?, ?, ?)');
    for (const migration of state.pending) {
      db.exec(migration.sql);
      record.run(migration.id, migration.name, now());
    }
    return state.pending.map((m) => m.id);
  });
  // IMMEDIATE takes the write lock up front, so two daemons starting together can't both read
  // "pending" and then both try to create the same table.
  return run.immediate();
}
