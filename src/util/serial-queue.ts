/**
 * Runs async operations one at a time in arrival order. Reloads and disconnects go through one
 * queue so two operators can never interleave a teardown with a connect.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private depth = 0;

  /** Operations queued or running. */
  get size(): number {
    return this.depth;
  }

  run<T>(operation: () => Promise<T>): Promise<T> {
    this.depth += 1;
    const result = this.tail.then(operation);
    // The chain must continue after a failed operation; the caller still sees the rejection.
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result.finally(() => {
      this.depth -= 1;
    });
  }
}
