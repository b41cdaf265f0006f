import type { CredentialStore } from '../ports.js';
import type { CredentialRow } from '../store-rows.js';
import { WriteOrder, type PgBackend } from './pg-backend.js';

/** The credentials an embedder stores per server (SPEC §3) in PostgreSQL (`stored_credential`). Never logged. */
export class PgCredentialStore implements CredentialStore {
  readonly #pg: PgBackend;
  readonly #order = new WriteOrder();
  readonly #known = new Map<string, string | undefined>();

  constructor(backend: PgBackend) {
    this.#pg = backend;
  }

  get(server: string): Promise<string | undefined> {
    return this.#order.read(() =>
      this.#pg.recall(
        this.#known,
        server,
        'credential read',
        { server },
        undefined,
        async () => (await this.#pg.query<CredentialRow>('SELECT token FROM stored_credential WHERE server = $1', [server])).rows[0]?.token,
      ),
    );
  }

  put(server: string, token: string, now: number): Promise<void> {
    this.#known.set(server, token);
    return this.#write('credential write', server, () =>
      this.#pg.query(
        `INSERT INTO stored_credential (server, token, saved_at) VALUES ($1, $2, $3)
         ON CONFLICT (server) DO UPDATE SET token = excluded.token, saved_at = excluded.saved_at`,
        [server, token, now],
      ),
    );
  }

  delete(server: string): Promise<void> {
    this.#known.set(server, undefined);
    return this.#write('credential delete', server, () => this.#pg.query('DELETE FROM stored_credential WHERE server = $1', [server]));
  }

  #write(what: string, server: string, run: () => Promise<unknown>): Promise<void> {
    return this.#order.write(async () => {
      await this.#pg.write(what, { server }, run);
    });
  }
}
