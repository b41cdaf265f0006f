import { isSwitchboardError, SwitchboardError } from '../../../../src/errors.js';
import type { CallGate } from '../../../../src/upstream/server/call-gate.js';
import type { ManualClock } from '../../../helpers/manual-clock.js';

/**
 * Servers made of manual-clock timers, for the call gate's tests (issue #35): calls go through a
 * real `CallGate` and take as long as the simulated server says, so minutes of traffic run in
 * milliseconds and every figure is exact.
 */

/** How a simulated server serves one call: resolves when the call is answered. */
export type Serve = (serviceMs: number) => Promise<void>;

/** Serves any number of calls at once: each takes its own time. */
export function parallelServer(clock: ManualClock): Serve & { deepest: () => number } {
  let running = 0;
  let deepest = 0;
  const serve = (serviceMs: number): Promise<void> => {
    running++;
    deepest = Math.max(deepest, running);
    return new Promise((resolve) =>
      clock.setTimeout(() => {
        running--;
        resolve();
      }, serviceMs),
    );
  };
  return Object.assign(serve, { deepest: () => deepest });
}

/** Serves one call at a time, first in, first out; `depths` has how deep its own queue was at each arrival (itself included). */
export function serialServer(clock: ManualClock): Serve & { depths: number[] } {
  const line: Array<{ serviceMs: number; done: () => void }> = [];
  const depths: number[] = [];
  let busy = false;
  const next = (): void => {
    const call = line.shift();
    if (!call) {
      busy = false;
      return;
    }
    busy = true;
    clock.setTimeout(() => {
      call.done();
      next();
    }, call.serviceMs);
  };
  const serve = (serviceMs: number): Promise<void> =>
    new Promise((done) => {
      depths.push(line.length + (busy ? 1 : 0) + 1);
      line.push({ serviceMs, done });
      if (!busy) next();
    });
  return Object.assign(serve, { depths });
}

export type Outcome = 'answered' | 'SERVER_BUSY' | 'TOOL_CALL_TIMEOUT';

const timedOut = () => new SwitchboardError('TOOL_CALL_TIMEOUT', 'waited for a slot past the deadline');

/** One call through the gate to `serve`, within `deadlineMs`; the gate learns how long the server took. */
export async function callThrough(gate: CallGate, clock: ManualClock, serve: Serve, serviceMs: number, deadlineMs = 60_000): Promise<Outcome> {
  let release;
  try {
    release = gate.tryEnter() ?? (await gate.enter('sim', { timeoutMs: deadlineMs, timedOut }));
  } catch (err) {
    if (isSwitchboardError(err, 'SERVER_BUSY') || isSwitchboardError(err, 'TOOL_CALL_TIMEOUT')) return err.code as Outcome;
    throw err;
  }
  const sentAt = clock.now();
  await serve(serviceMs);
  release(clock.now() - sentAt);
  return 'answered';
}

/** Lets every promise that can settle now settle (no time passes on any clock). */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Moves the manual clock in `stepMs` steps, settling promises after each, until `done()` or `maxMs`. */
export async function runUntil(clock: ManualClock, done: () => boolean, stepMs = 10, maxMs = 600_000): Promise<void> {
  await settle();
  for (let ran = 0; !done() && ran < maxMs; ran += stepMs) {
    clock.advance(stepMs);
    await settle();
  }
}

/** The same spread of numbers every run (a linear congruential generator). */
export function seeded(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
}
