/**
 * Where tasks are kept (issue #41): each task as one JSON document under its id, until its TTL
 * ends. A task is written as it changes (created, waiting for input, finished), so on replicas
 * sharing a store any of them answers `tasks/get`. Promise-returning and never rejecting, like
 * every store port: a task the store could not keep is still answered by the replica running it.
 */
export interface TaskStore {
  put(taskId: string, document: string, expiresAt: number): Promise<void>;
  /** The document, or undefined when unknown or past `now`. */
  get(taskId: string, now: number): Promise<string | undefined>;
}

/** Tasks kept in this process only (one replica, or no usable database). Expired ones are dropped as new ones come. */
export class MemoryTaskStore implements TaskStore {
  readonly #tasks = new Map<string, { document: string; expiresAt: number }>();

  async put(taskId: string, document: string, expiresAt: number): Promise<void> {
    this.#tasks.set(taskId, { document, expiresAt });
    if (this.#tasks.size % 256 === 0) this.#trim(Date.now());
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

  #trim(now: number): void {
    for (const [id, entry] of this.#tasks) if (entry.expiresAt <= now) this.#tasks.delete(id);
  }
}
