import { SwitchboardError } from '../../errors.js';
import { perCallController } from '../../util/abort.js';

/** The abort reason of a call whose HTTP client went away; nobody is left to answer. */
export const CLIENT_GONE: unique symbol = Symbol('client-gone');

/**
 * One AbortController per REST tool call, in one set, aborted together when the daemon's
 * shutdown signal fires. A single listener on the long-lived shutdown signal — instead of one
 * per call, or `AbortSignal.any` per call — keeps the hot path allocation-light and never trips
 * the EventTarget max-listener warning under concurrency.
 */
export class InFlightCalls {
  private readonly active = new Set<AbortController>();

  constructor(private readonly shutdownSignal: AbortSignal) {
    shutdownSignal.addEventListener('abort', () => this.abortAll(), { once: true });
  }

  /** Calls in flight right now (for `/metrics`). */
  get size(): number {
    return this.active.size;
  }

  /** Registers a call; throws `SHUTTING_DOWN` once shutdown has aborted in-flight work. */
  begin(): AbortController {
    if (this.shutdownSignal.aborted) throw new SwitchboardError('SHUTTING_DOWN');
    const controller = perCallController();
    this.active.add(controller);
    return controller;
  }

  end(controller: AbortController): void {
    this.active.delete(controller);
  }

  private abortAll(): void {
    const reason = new SwitchboardError('SHUTTING_DOWN', 'Switchboard is shutting down; the call was cancelled');
    for (const controller of this.active) controller.abort(reason);
    this.active.clear();
  }
}
