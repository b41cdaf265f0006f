/**
 * A set of callbacks with an unsubscribe handle. A listener that throws is reported to `onError`
 * and does not stop the others: one faulty subscriber must not break a connection's bookkeeping.
 */
export class ListenerSet<Args extends unknown[]> {
  readonly #listeners = new Set<(...args: Args) => void>();
  readonly #onError: (err: unknown) => void;

  constructor(onError: (err: unknown) => void = () => {}) {
    this.#onError = onError;
  }

  add(listener: (...args: Args) => void): () => void {
    // Wrapped so that adding the same function twice gives two independent subscriptions.
    const entry = (...args: Args) => listener(...args);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  emit(...args: Args): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(...args);
      } catch (err) {
        this.#onError(err);
      }
    }
  }

  clear(): void {
    this.#listeners.clear();
  }

  get size(): number {
    return this.#listeners.size;
  }
}
