import { linkSignal } from '../util/abort.js';
import { systemClock, type Clock, type ClockTimer } from '../util/clock.js';
import { waitFor } from '../util/wait-for.js';

/**
 * Whether the replicas that hold forwarded requests still run. A request forwarded to its owner
 * (forward-request.ts) waits for the owner's answer; an owner that accepted it and then stopped
 * (frozen, partitioned, its event loop stuck) would hold it for as long as the client waits. Every
 * `everyMs` while requests are forwarded, each owner is looked up among the live replicas (its
 * heartbeat is recent); one that is not ends its requests, which are answered as for an owner
 * that died: the forwarding replica answers for itself, or a relayed stream ends with the call's
 * outcome unknown. One lookup per owner and period, however many requests it holds.
 */
export class OwnerWatch {
  readonly #find: (id: string) => Promise<unknown>;
  readonly #everyMs: number;
  readonly #clock: Clock;
  /** Owners with forwarded requests in flight: what ends them, and how many there are. */
  readonly #owners = new Map<string, { gone: AbortController; requests: number }>();
  #timer: ClockTimer | undefined;

  /** `find(id)` answers the live replica `id`, or undefined when it is not live. */
  constructor(find: (id: string) => Promise<unknown>, everyMs: number, clock: Clock = systemClock) {
    this.#find = find;
    this.#everyMs = everyMs;
    this.#clock = clock;
  }

  /**
   * A signal that aborts once `owner` is no longer live; `release()` when the forwarded request is
   * over. Each request's signal is its own, linked to the owner's through one listener.
   */
  watch(owner: string): { gone: AbortSignal; release(): void } {
    let entry = this.#owners.get(owner);
    if (!entry) this.#owners.set(owner, (entry = { gone: new AbortController(), requests: 0 }));
    entry.requests += 1;
    this.#schedule();
    const held = entry;
    const linked = linkSignal(held.gone.signal);
    let released = false;
    return {
      gone: linked.signal,
      release: () => {
        if (released) return;
        released = true;
        linked.dispose();
        held.requests -= 1;
        if (held.requests === 0 && this.#owners.get(owner) === held) this.#owners.delete(owner);
      },
    };
  }

  #schedule(): void {
    if (this.#timer !== undefined) return;
    this.#timer = this.#clock.setTimeout(() => void this.#check(), this.#everyMs);
  }

  async #check(): Promise<void> {
    try {
      await Promise.all(
        [...this.#owners].map(async ([owner, entry]) => {
          if ((await this.#lookUp(owner)) !== undefined) return;
          if (this.#owners.get(owner) === entry) this.#owners.delete(owner);
          entry.gone.abort(new Error(`replica ${owner}, which holds this request, stopped beating`));
        }),
      );
    } finally {
      this.#timer = undefined;
      if (this.#owners.size > 0) this.#schedule();
    }
  }

  /**
   * The owner as `find` answers it within one period. A lookup that fails or does not answer in
   * time (the store away or stuck) says nothing against the owner: it counts as live.
   */
  #lookUp(owner: string): Promise<unknown> {
    const found = Promise.resolve()
      .then(() => this.#find(owner))
      .catch(() => true);
    return waitFor(found, { deadlineMs: this.#everyMs, onDeadline: () => true, clock: this.#clock });
  }
}
