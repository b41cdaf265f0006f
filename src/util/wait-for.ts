import { linkSignal } from './abort.js';
import { systemClock, type Clock, type ClockTimer } from './clock.js';

export interface WaitOptions<D = undefined> {
  /** Aborting it ends the wait, rejected with the signal's reason. @default none */
  signal?: AbortSignal | undefined;
  /**
   * The longest wait, timed on `clock`; 0 or less falls due on the clock's next turn (so a
   * promise already settled still wins). @default no deadline
   */
  deadlineMs?: number | undefined;
  /** What the wait resolves with when the deadline comes first; throw to reject instead. @default undefined */
  onDeadline?: () => D;
  /** Times the deadline; tests inject a manual one (STYLE rule 11). @default systemClock */
  clock?: Clock;
}

const noop = (): void => {};

/**
 * Settles like `promise`, unless `signal` aborts first (rejects with its reason) or the deadline
 * passes first (resolves with `onDeadline()`, or rejects with what it throws). The listener and
 * the timer go in `finally` whichever way it ends, and the listener is on a signal linked to
 * `signal` (abort.ts), so a long-lived signal holds one listener however many waits are in flight.
 *
 * This only stops the waiting: the work behind `promise` goes on. Use it where the work is
 * shared by others or torn down on its own; give work of your own a signal that cancels it (rule 4).
 */
export async function waitFor<T, D = undefined>(promise: Promise<T>, options: WaitOptions<D> = {}): Promise<T | D> {
  const { signal, deadlineMs, onDeadline, clock = systemClock } = options;
  if (signal?.aborted) {
    // Nobody waits for it any more: a later rejection must not go unhandled.
    promise.catch(noop);
    throw signal.reason;
  }
  const link = signal ? linkSignal(signal) : undefined;
  let onAbort: (() => void) | undefined;
  let timer: ClockTimer | undefined;
  try {
    return await new Promise<T | D>((resolve, reject) => {
      promise.then(resolve, reject);
      if (link) {
        const linked = link.signal;
        onAbort = () => reject(linked.reason);
        linked.addEventListener('abort', onAbort, { once: true });
      }
      if (deadlineMs !== undefined) {
        timer = clock.setTimeout(() => {
          try {
            resolve(onDeadline ? onDeadline() : (undefined as D));
          } catch (err) {
            reject(err);
          }
        }, deadlineMs);
      }
    });
  } finally {
    clock.clearTimeout(timer);
    if (onAbort) link?.signal.removeEventListener('abort', onAbort);
    link?.dispose();
  }
}

/**
 * Resolves after `ms` on `clock`, or rejects with `signal`'s reason when it aborts first; the
 * timer and the listener go either way. A pause a server asked for, a back-off between tries.
 */
export function sleep(ms: number, options: { signal?: AbortSignal | undefined; clock?: Clock } = {}): Promise<void> {
  // A promise of its own that never settles: a shared one would keep every sleep's reaction for ever.
  return waitFor(new Promise<never>(() => {}), { ...options, deadlineMs: ms });
}
