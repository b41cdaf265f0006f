import { MemoryTaskStore, type TaskStore } from '../task-store.js';
import type { PgBackend } from './pg-backend.js';
import type { TaskRow } from '../store-rows.js';

/**
 * `tasks` in PostgreSQL (issue #41): the replica running a task writes each change, and any
 * replica answers `tasks/get` from the row. While the database is away a task is kept in this
 * replica's memory, so its own replica still answers for it.
 */
export class PgTaskStore implements TaskStore {
  readonly #pg: PgBackend;
  readonly #memory = new MemoryTaskStore();

  constructor(backend: PgBackend) {
    this.#pg = backend;
  }

  async put(taskId: string, document: string, expiresAt: number, now: number): Promise<void> {
    const kept = await this.#pg.write('task write', { task: taskId }, async () => {
      await this.#pg.query(
        'INSERT INTO tasks (task_id, document, expires_at) VALUES ($1, $2, $3) ON CONFLICT (task_id) DO UPDATE SET document = excluded.document, expires_at = excluded.expires_at',
        [taskId, document, expiresAt],
      );
      await this.#pg.query('DELETE FROM tasks WHERE expires_at < $1', [now]);
    });
    if (!kept) await this.#memory.put(taskId, document, expiresAt, now);
  }

  async get(taskId: string, now: number): Promise<string | undefined> {
    const row = await this.#pg.read(
      'task read',
      { task: taskId },
      undefined as TaskRow | undefined,
      async () => (await this.#pg.query<TaskRow>('SELECT document FROM tasks WHERE task_id = $1 AND expires_at > $2', [taskId, now])).rows[0],
    );
    return row?.document ?? this.#memory.get(taskId, now);
  }

  async list(agent: string, now: number): Promise<string[]> {
    const rows = await this.#pg.read(
      'task list',
      { agent },
      [] as TaskRow[],
      async () => (await this.#pg.query<TaskRow>("SELECT document FROM tasks WHERE (document::jsonb)->>'agent' = $1 AND expires_at > $2", [agent, now])).rows,
    );
    return [...rows.map((row) => row.document), ...(await this.#memory.list(agent, now))];
  }
}
