import type { Clock } from '../../util/clock.js';
import type { ApprovalOutcome } from '../../events/daemon-events.js';

/** Exact calls remembered at once; beyond, the oldest is forgotten (its call is held again). */
export const MAX_CALL_GRANTS = 10_000;

/** What is remembered about one exact call (agent, tool, arguments digest). */
export interface Grant {
  outcome: Exclude<ApprovalOutcome, 'withdrawn'>;
  /** Epoch ms on the injected clock; from then on the entry is gone. */
  until: number;
  /** A decision on one call is used by that call's retry once; "the same call for 1 h" by every call until `until`. */
  once: boolean;
  /** The approval that decided it. */
  approvalId: string;
}

/**
 * Decisions bound to exact calls (issue #40 item 3), keyed by `callKeyOf`: an operator's "the
 * same call for 1 h" (every identical call passes until it expires), and the decision on a call
 * whose 2026-07-28 caller is not waiting (its retry with the same arguments picks it up once).
 * Expiry is read from the injected clock when an entry is looked at: no timer per grant.
 */
export class CallGrants {
  readonly #grants = new Map<string, Grant>();

  constructor(private readonly clock: Clock) {}

  get size(): number {
    return this.#grants.size;
  }

  /** Remembers `outcome` for the call under `key` until `until`; a later decision on the same call replaces it. */
  set(key: string, grant: Grant): void {
    this.#grants.delete(key);
    if (this.#grants.size >= MAX_CALL_GRANTS) this.#prune();
    this.#grants.set(key, grant);
  }

  /** The decision that applies to the call under `key` now, used up when it was for one call; undefined when none. */
  take(key: string): Grant | undefined {
    const grant = this.#grants.get(key);
    if (!grant) return undefined;
    if (this.clock.now() >= grant.until) {
      this.#grants.delete(key);
      return undefined;
    }
    if (grant.once) this.#grants.delete(key);
    return grant;
  }

  /** Drops what has expired and, if still full, the oldest entry (a Map iterates in insertion order). */
  #prune(): void {
    const now = this.clock.now();
    for (const [key, grant] of this.#grants) if (now >= grant.until) this.#grants.delete(key);
    if (this.#grants.size >= MAX_CALL_GRANTS) {
      const oldest = this.#grants.keys().next().value;
      if (oldest !== undefined) this.#grants.delete(oldest);
    }
  }
}
