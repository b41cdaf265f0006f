import type { Database, Statement } from 'better-sqlite3';
import { errorMessage } from '../errors.js';
import type { StoreLogger } from './db.js';
import type { AgentStore, StoredAgent, StoredAgentKey } from './ports.js';
import { agentsOf, keyOf, type AgentRow, type KeyRow } from './store-rows.js';

/**
 * The SQLite agent store (see `AgentStore` in ports.ts), on the tool cache's connection. Reads
 * that fail resolve empty and writes that fail are logged by agent name, never by value.
 */
export class SqliteAgentStore implements AgentStore {
  readonly #db: Database;
  readonly #log: StoreLogger | undefined;
  readonly #sql: {
    agents: Statement<[], AgentRow>;
    keys: Statement<[], KeyRow>;
    putAgent: Statement<[string, string, number, number | null]>;
    putKey: Statement<[string, string, Buffer, Buffer, number, number | null]>;
    revokeAgent: Statement<[number, string]>;
    revokeKeys: Statement<[number, string]>;
  };

  /** Throws when the agent tables are missing (a database opened read-only from before them). */
  constructor(db: Database, options: { logger?: StoreLogger } = {}) {
    this.#db = db;
    this.#log = options.logger;
    this.#sql = {
      agents: db.prepare('SELECT name, settings_json, created_at, revoked_at FROM agent ORDER BY name'),
      keys: db.prepare('SELECT id, agent, salt, hash, created_at, revoked_at FROM agent_key'),
      putAgent: db.prepare(`
        INSERT INTO agent (name, settings_json, created_at, revoked_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (name) DO UPDATE SET settings_json = excluded.settings_json, created_at = excluded.created_at, revoked_at = excluded.revoked_at`),
      putKey: db.prepare('INSERT OR REPLACE INTO agent_key (id, agent, salt, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)'),
      revokeAgent: db.prepare('UPDATE agent SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL'),
      revokeKeys: db.prepare('UPDATE agent_key SET revoked_at = ? WHERE agent = ? AND revoked_at IS NULL'),
    };
  }

  async agents(): Promise<StoredAgent[]> {
    return this.#read('agents', () => this.#sql.agents.all().flatMap(agentsOf));
  }

  async keys(): Promise<StoredAgentKey[]> {
    return this.#read('keys', () => this.#sql.keys.all().map(keyOf));
  }

  async putAgent(agent: StoredAgent): Promise<void> {
    this.#write(agent.name, () => this.#sql.putAgent.run(agent.name, JSON.stringify(agent.settings), agent.createdAt, agent.revokedAt ?? null));
  }

  async putKey(key: StoredAgentKey): Promise<void> {
    this.#write(key.agent, () => this.#sql.putKey.run(key.id, key.agent, key.salt, key.hash, key.createdAt, key.revokedAt ?? null));
  }

  async revokeAgent(name: string, now: number): Promise<void> {
    this.#write(name, () =>
      this.#db.transaction(() => {
        this.#sql.revokeAgent.run(now, name);
        this.#sql.revokeKeys.run(now, name);
      })(),
    );
  }

  async revokeKeys(agent: string, now: number): Promise<void> {
    this.#write(agent, () => this.#sql.revokeKeys.run(now, agent));
  }

  #read<T>(what: string, read: () => T[]): T[] {
    if (!this.#db.open) return [];
    try {
      return read();
    } catch (err) {
      this.#log?.warn({ what, err: errorMessage(err) }, 'agent store read failed');
      return [];
    }
  }

  #write(agent: string, write: () => unknown): void {
    if (!this.#db.open) return;
    try {
      write();
    } catch (err) {
      this.#log?.warn({ agent, err: errorMessage(err) }, 'agent store write failed');
    }
  }
}

/** Agents kept in this process only: the store when there is no writable database. */
export class MemoryAgentStore implements AgentStore {
  readonly #agents = new Map<string, StoredAgent>();
  readonly #keys = new Map<string, StoredAgentKey>();

  async agents(): Promise<StoredAgent[]> {
    return [...this.#agents.values()].map((agent) => ({ ...agent }));
  }

  async keys(): Promise<StoredAgentKey[]> {
    return [...this.#keys.values()].map((key) => ({ ...key }));
  }

  async putAgent(agent: StoredAgent): Promise<void> {
    this.#agents.set(agent.name, { ...agent });
  }

  async putKey(key: StoredAgentKey): Promise<void> {
    this.#keys.set(key.id, { ...key });
  }

  async revokeAgent(name: string, now: number): Promise<void> {
    const agent = this.#agents.get(name);
    if (agent && agent.revokedAt === undefined) agent.revokedAt = now;
    await this.revokeKeys(name, now);
  }

  async revokeKeys(agent: string, now: number): Promise<void> {
    for (const key of this.#keys.values()) if (key.agent === agent && key.revokedAt === undefined) key.revokedAt = now;
  }
}
