import type { AgentStore, StoredAgent, StoredAgentKey } from '../ports.js';
import { WriteOrder, type PgBackend } from './pg-backend.js';
import { agentsOf, keyOf, type AgentRow, type KeyRow } from '../store-rows.js';

/**
 * Agents and their key hashes in PostgreSQL (`agent`, `agent_key`): a key created on one replica
 * is in the database every replica reads. Failing reads resolve empty, failing writes are
 * logged by agent name, never by value.
 */
export class PgAgentStore implements AgentStore {
  readonly #pg: PgBackend;
  readonly #order = new WriteOrder();

  constructor(backend: PgBackend) {
    this.#pg = backend;
  }

  agents(): Promise<StoredAgent[]> {
    return this.#order.read(() =>
      this.#pg.read('agent store read', { what: 'agents' }, [] as StoredAgent[], async () =>
        (await this.#pg.query<AgentRow>('SELECT name, settings_json, created_at, revoked_at FROM agent ORDER BY name')).rows.flatMap(agentsOf),
      ),
    );
  }

  keys(): Promise<StoredAgentKey[]> {
    return this.#order.read(() =>
      this.#pg.read('agent store read', { what: 'keys' }, [] as StoredAgentKey[], async () =>
        (await this.#pg.query<KeyRow>('SELECT id, agent, salt, hash, created_at, revoked_at FROM agent_key')).rows.map(keyOf),
      ),
    );
  }

  putAgent(agent: StoredAgent): Promise<void> {
    return this.#write(
      agent.name,
      `
      INSERT INTO agent (name, settings_json, created_at, revoked_at) VALUES ($1, $2, $3, $4)
      ON CONFLICT (name) DO UPDATE SET settings_json = excluded.settings_json, created_at = excluded.created_at, revoked_at = excluded.revoked_at`,
      [agent.name, JSON.stringify(agent.settings), agent.createdAt, agent.revokedAt ?? null],
    );
  }

  putKey(key: StoredAgentKey): Promise<void> {
    return this.#write(
      key.agent,
      `
      INSERT INTO agent_key (id, agent, salt, hash, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6)
      ON CONFLICT (id) DO UPDATE SET agent = excluded.agent, salt = excluded.salt, hash = excluded.hash,
        created_at = excluded.created_at, revoked_at = excluded.revoked_at`,
      [key.id, key.agent, key.salt, key.hash, key.createdAt, key.revokedAt ?? null],
    );
  }

  revokeAgent(name: string, now: number): Promise<void> {
    return this.#order.write(async () => {
      await this.#pg.write('agent store write', { agent: name }, () =>
        this.#pg.transaction(async (client) => {
          await client.query('UPDATE agent SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL', [now, name]);
          await client.query('UPDATE agent_key SET revoked_at = $1 WHERE agent = $2 AND revoked_at IS NULL', [now, name]);
        }),
      );
    });
  }

  revokeKeys(agent: string, now: number): Promise<void> {
    return this.#write(agent, 'UPDATE agent_key SET revoked_at = $1 WHERE agent = $2 AND revoked_at IS NULL', [now, agent]);
  }

  #write(agent: string, sql: string, params: unknown[]): Promise<void> {
    return this.#order.write(async () => {
      await this.#pg.write('agent store write', { agent }, () => this.#pg.query(sql, params));
    });
  }
}
