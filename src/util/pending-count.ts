import { deferred, type Deferred } from './deferred.js';

/** How many things are pending, and a promise for when that reaches zero. */
export class PendingCount {
  private count = 0;
  private idle: Deferred<void> | undefined;

  add(): void {
    this.count += 1;
  }

  done(): void {
    this.count -= 1;
    if (this.count > 0) return;
    this.idle?.resolve();
    this.idle = undefined;
  }

  drained(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    this.idle ??= deferred();
    return this.idle.promise;
  }
}
