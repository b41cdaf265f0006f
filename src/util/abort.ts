/**
 * Signal helpers for deadlines and cancellation. Every slow operation gets its own short-lived
 * signal, because the SDK's `Protocol.request()` adds an abort listener to the signal it is given
 * and never removes it: handed a long-lived (daemon-wide) signal, it leaks one listener per
 * request. The fresh signal is a plain AbortController's, linked to the caller's through one
 * shared listener per parent (see `attach`). Not `AbortSignal.any`: on Node 20 a composite
 * signal that has a listener is held strongly until a source aborts, so with the SDK's listener
 * on it every call would leak about a kilobyte for as long as the daemon-wide signal lives.
 */

/** setTimeout's largest delay; used where the SDK insists on a timeout but we want none. */
export const MAX_TIMER_MS = 2_147_483_647;

export interface LinkedSignal {
  /** Aborts, with the parent's reason, when the parent aborts. */
  readonly signal: AbortSignal;
  /** Unlinks from the parent. Call it in `finally`. */
  dispose(): void;
}

export interface Deadline extends LinkedSignal {
  /** True once the deadline itself fired (as opposed to the parent aborting). */
  readonly timedOut: boolean;
}

interface FanOut {
  children: Set<AbortController>;
  onAbort: () => void;
}

/**
 * One abort listener per parent signal, fanned out to its live children, so that many
 * concurrent operations under one daemon-wide signal never trip MaxListenersExceededWarning.
 */
const fanOuts = new WeakMap<AbortSignal, FanOut>();

function attach(parent: AbortSignal, child: AbortController): () => void {
  let fan = fanOuts.get(parent);
  if (!fan) {
    const children = new Set<AbortController>();
    const onAbort = () => {
      fanOuts.delete(parent);
      for (const controller of children) controller.abort(parent.reason);
      children.clear();
    };
    fan = { children, onAbort };
    fanOuts.set(parent, fan);
    parent.addEventListener('abort', onAbort, { once: true });
  }
  const entry = fan;
  entry.children.add(child);
  return () => {
    if (!entry.children.delete(child) || entry.children.size > 0) return;
    parent.removeEventListener('abort', entry.onAbort);
    if (fanOuts.get(parent) === entry) fanOuts.delete(parent);
  };
}

function link(parent: AbortSignal | undefined, controller: AbortController): () => void {
  if (!parent) return () => {};
  if (parent.aborted) {
    controller.abort(parent.reason);
    return () => {};
  }
  return attach(parent, controller);
}

/** Signals of controllers made by `perCallController`: already private to one operation. */
const perCallSignals = new WeakSet<AbortSignal>();
const noop = (): void => {};

/**
 * An AbortController for exactly one operation (one REST or `/mcp` tool call), which never
 * outlives it. `linkSignal` hands its signal through as is instead of shielding it behind a
 * fresh one: the listener the SDK leaves on it dies with the call. That saves a second signal
 * and an add/remove listener pair per call, about 7% of the daemon's CPU on the call hot path
 * (bench B2). Hand such a signal to one operation only.
 */
export function perCallController(): AbortController {
  const controller = new AbortController();
  perCallSignals.add(controller.signal);
  return controller;
}

/** A fresh signal that follows `parent` (see the module comment for why). */
export function linkSignal(parent: AbortSignal | undefined): LinkedSignal {
  if (parent && perCallSignals.has(parent)) return { signal: parent, dispose: noop };
  const controller = new AbortController();
  return { signal: controller.signal, dispose: link(parent, controller) };
}

/**
 * A fresh signal bounded by `timeoutMs` (0 or less: no deadline) and linked to `parent`.
 * Built on the global `setTimeout` rather than `AbortSignal.timeout` so that the timer can be
 * cleared on success and driven by fake timers in tests.
 */
export function createDeadline(parent: AbortSignal | undefined, timeoutMs: number): Deadline {
  const controller = new AbortController();
  const unlink = link(parent, controller);
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  if (timeoutMs > 0 && !controller.signal.aborted) {
    timer = setTimeout(
      () => {
        timedOut = true;
        controller.abort(new DOMException(`The operation timed out after ${timeoutMs} ms`, 'TimeoutError'));
      },
      Math.min(timeoutMs, MAX_TIMER_MS),
    );
  }
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    dispose() {
      clearTimeout(timer);
      unlink();
    },
  };
}
