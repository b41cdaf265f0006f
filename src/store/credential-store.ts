import type { Database, Statement } from 'better-sqlite3';
import type { CredentialStore } from './ports.js';
import type { CredentialRow } from './store-rows.js';

/** How the owning store runs a statement: a failing read is a miss, a failing write is logged. */
export interface Guard {
  read<T>(what: string, server: string, read: () => T): T | undefined;
  write(what: string, server: string, write: () => unknown): void;
}

/**
 * The SQLite credential store (SPEC §3 "stored credentials"), in the OAuth store's database and
 * on its connection: the OAuth store's guard runs every statement.
 */
export class SqliteCredentialStore implements CredentialStore {
  readonly #guard: Guard;
  readonly #get: Statement<[string], CredentialRow>;
  readonly #put: Statement<[string, string, number]>;
  readonly #delete: Statement<[string]>;

  constructor(db: Database, guard: Guard) {
    this.#guard = guard;
    this.#get = db.prepare('SELECT token FROM stored_credential WHERE server = ?');
    this.#put = db.prepare(`
      INSERT INTO stored_credential (server, token, saved_at) VALUES (?, ?, ?)
      ON CONFLICT (server) DO UPDATE SET token = excluded.token, saved_at = excluded.saved_at`);
    this.#delete = db.prepare('DELETE FROM stored_credential WHERE server = ?');
  }

  async get(server: string): Promise<string | undefined> {
    return this.#guard.read('credential read', server, () => this.#get.get(server)?.token);
  }

  async put(server: string, token: string, now: number): Promise<void> {
    this.#guard.write('credential write', server, () => this.#put.run(server, token, now));
  }

  async delete(server: string): Promise<void> {
    this.#guard.write('credential delete', server, () => this.#delete.run(server));
  }
}
