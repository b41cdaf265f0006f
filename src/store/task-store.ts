import type { Database, Statement } from 'better-sqlite3';
import { errorMessage } from '../errors.js';
import type { StoreLogger } from './db.js';
import type { TaskRow } from './store-rows.js';

/**
 * Where tasks are kept (issue #41): each task as one JSON document under its id, until its TTL
 * ends. A task is written as it changes (created, waiting for input, finished), so on replicas
 * sharing a store any of them answers `tasks/get`. Promise-returning and never rejecting, like
 * every store port: a task the store could not keep is still answered by the replica running it.
 */
export interface TaskStore {
  /** Keeps `document` until `expiresAt`; tasks expired by `now` may be dropped meanwhile. */
  put(taskId: string, document: string, expiresAt: number, now: number): Promise<void>;
  /** The document, or undefined when unknown or past `now`. */
  get(taskId: string, now: number): Promise<string | undefined>;
  /** The documents of `agent`'s tasks not past `now` (a 2025-11-25 `tasks/list`). */
  list(agent: string, now: number): Promise<string[]>;
}

/** Whose task a kept document is. */
function agentOf(document: string): string | undefined {
  return (JSON.parse(document) as { agent?: string }).agent;
}

/** Tasks kept in this process only (one replica, or no usable database). Expired ones are dropped as new ones come. */
export class MemoryTaskStore implements TaskStore {
  readonly #tasks = new Map<string, { document: string; expiresAt: number }>();

  async put(taskId: string, document: string, expiresAt: number, now: number): Promise<void> {
    this.#tasks.set(taskId, { document, expiresAt });
    if (this.#tasks.size % 256 === 0) this.#trim(now);
  }

  async get(taskId: string, now: number): Promise<string | undefined> {
    const entry = this.#tasks.get(taskId);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.#tasks.delete(taskId);
      return undefined;
    }
    return entry.document;
  }

  async list(agent: string, now: number): Promise<string[]> {
    return [...this.#tasks.values()].filter((entry) => entry.expiresAt > now && agentOf(entry.document) === agent).map((entry) => entry.document);
  }

  #trim(now: number): void {
    for (const [id, entry] of this.#tasks) if (entry.expiresAt <= now) this.#tasks.delete(id);
  }
}

/**
 * `tasks` in the SQLite file: a task's outcome survives a restart for its TTL (its call does not:
 * a task still `working` when the daemon stopped stays so until it expires). A write that fails
 * (a read-only file) is kept in memory for the run.
 */
export class SqliteTaskStore implements TaskStore {
  readonly #memory = new MemoryTaskStore();
  readonly #upsert: Statement<[string, string, number]>;
  readonly #select: Statement<[string, number], TaskRow>;
  readonly #trim: Statement<[number]>;
  readonly #byAgent: Statement<[string, number], TaskRow>;

  /** Throws if the `tasks` table is missing (a database of a version without it). */
  constructor(
    private readonly db: Database,
    private readonly options: { readOnly?: boolean; logger?: StoreLogger } = {},
  ) {
    this.#upsert = db.prepare(
      'INSERT INTO tasks (task_id, document, expires_at) VALUES (?, ?, ?) ON CONFLICT (task_id) DO UPDATE SET document = excluded.document, expires_at = excluded.expires_at',
    );
    this.#select = db.prepare('SELECT document FROM tasks WHERE task_id = ? AND expires_at > ?');
    this.#trim = db.prepare('DELETE FROM tasks WHERE expires_at < ?');
    this.#byAgent = db.prepare("SELECT document FROM tasks WHERE json_extract(document, '$.agent') = ? AND expires_at > ?");
  }

  async put(taskId: string, document: string, expiresAt: number, now: number): Promise<void> {
    if (!this.options.readOnly && this.db.open) {
      try {
        this.#upsert.run(taskId, document, expiresAt);
        this.#trim.run(now);
        return;
      } catch (err) {
        this.options.logger?.warn({ task: taskId, err: errorMessage(err) }, 'task write failed');
      }
    }
    await this.#memory.put(taskId, document, expiresAt, now);
  }

  async get(taskId: string, now: number): Promise<string | undefined> {
    if (this.db.open) {
      try {
        const row = this.#select.get(taskId, now);
        if (row) return row.document;
      } catch (err) {
        this.options.logger?.warn({ task: taskId, err: errorMessage(err) }, 'task read failed');
      }
    }
    return this.#memory.get(taskId, now);
  }

  async list(agent: string, now: number): Promise<string[]> {
    const kept = await this.#memory.list(agent, now);
    if (!this.db.open) return kept;
    try {
      return [...this.#byAgent.all(agent, now).map((row) => row.document), ...kept];
    } catch (err) {
      this.options.logger?.warn({ agent, err: errorMessage(err) }, 'task list failed');
      return kept;
    }
  }
}
