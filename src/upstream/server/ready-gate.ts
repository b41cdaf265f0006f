import { SwitchboardError, type ErrorInfo } from '../../errors.js';
import { waitFor } from '../../util/wait-for.js';
import type { Clock } from '../../util/clock.js';
import { deferred, type Deferred } from '../../util/deferred.js';

/**
 * Where calls wait for a server that is connecting or reconnecting: opened when the wait begins,
 * settled with the connection or with why none is coming. A waiter leaves at its own deadline
 * or abort; the attempt it waited on carries on for the others.
 */
export class ReadyGate<T> {
  private pending: Deferred<T> | undefined;

  get isOpen(): boolean {
    return this.pending !== undefined;
  }

  open(): void {
    if (this.pending) return;
    const pending = deferred<T>();
    // Nobody may be waiting when it settles.
    pending.promise.catch(() => undefined);
    this.pending = pending;
  }

  resolve(value: T): void {
    const pending = this.pending;
    this.pending = undefined;
    pending?.resolve(value);
  }

  reject(error: ErrorInfo): void {
    const pending = this.pending;
    this.pending = undefined;
    pending?.reject(new SwitchboardError(error.code, error.message));
  }

  /**
   * Waits for the gate to settle, at most `budgetMs` (the caller's deadline, timed on `clock`) and
   * until `signal` aborts. Rejects with `onTimeout()` when the budget runs out first.
   */
  async wait(signal: AbortSignal | undefined, budgetMs: number, clock: Clock, onTimeout: () => Error): Promise<T> {
    const pending = this.pending;
    if (!pending) throw new Error('ReadyGate.wait on a closed gate');
    const onDeadline = (): never => {
      throw onTimeout();
    };
    return waitFor(pending.promise, { signal, clock, ...(budgetMs > 0 ? { deadlineMs: budgetMs, onDeadline } : {}) });
  }
}
