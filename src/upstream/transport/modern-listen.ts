import type { Client, McpSubscription } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import { errorMessage } from '../../errors.js';
import { systemClock, type Clock } from '../../util/clock.js';
import { waitFor } from '../../util/wait-for.js';

/** How long a resource subscription waits for the listen stream that carries it. */
export const SUBSCRIBE_WAIT_MS = 2_000;

/** What a modern-era (2026-07-28) server is asked to send on the listen stream. */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
}

/**
 * The `subscriptions/listen` stream of one modern-era connection: the era's only way for a
 * server to send list changes and resource updates. The filter is fixed per stream, so a change
 * of the subscribed URIs opens a new stream with the new filter and then closes the old one —
 * no update is lost in between (at worst one arrives twice). A stream the server drops is
 * reported (`onRemoteEnd`), so the upstream asks whether the server is gone.
 */
export class ModernListen {
  readonly #uris = new Set<string>();
  #current: McpSubscription | undefined;
  /** Serialises re-opens: each waits for the one before, so streams never overtake each other. */
  #opening: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(
    private readonly client: Client,
    private readonly lists: ListenFilter,
    private readonly onRemoteEnd: (err: Error) => void,
    private readonly log: Logger | undefined,
    /** Times the subscribe wait; tests about it inject a manual clock. */
    private readonly clock: Clock = systemClock,
  ) {}

  /** Opens the first stream in the background when there is anything to listen for. */
  start(): void {
    if (Object.values(this.lists).some(Boolean)) void this.#reopen();
  }

  /**
   * Adds a URI to the resource subscriptions; resolves once a stream carrying it is open, or
   * after `SUBSCRIBE_WAIT_MS` (issue #21). The 2026-07-28 era has no subscribe request, so the
   * answer waits for the new stream a moment — a refusal reaches the agent — but not for a
   * server that never acknowledges it (one in use answers listen with a body the SDK cannot
   * read, and the ack would time out after a minute); the stream keeps opening, a failure is logged.
   */
  subscribe(uri: string): Promise<void> {
    if (this.#uris.has(uri)) return this.#awhile(this.#opening);
    this.#uris.add(uri);
    const opened = this.#reopen(true);
    opened.catch((err: unknown) => this.log?.warn({ uri, err: errorMessage(err) }, 'subscriptions/listen for a resource failed; its updates will not be seen'));
    return this.#awhile(opened);
  }

  unsubscribe(uri: string): Promise<void> {
    if (!this.#uris.delete(uri)) return this.#awhile(this.#opening);
    return this.#awhile(this.#reopen());
  }

  /** `work`, or nothing once `SUBSCRIBE_WAIT_MS` passed (it goes on in the background). */
  async #awhile(work: Promise<void>): Promise<void> {
    await waitFor(work, { deadlineMs: SUBSCRIBE_WAIT_MS, clock: this.clock });
  }

  close(): void {
    this.#closed = true;
    const current = this.#current;
    this.#current = undefined;
    void current?.close().catch(() => undefined);
  }

  #reopen(strict = false): Promise<void> {
    const next = this.#opening.then(() => this.#open(strict));
    // A failed open is reported to the caller that asked for it, never to the next one.
    this.#opening = next.catch(() => undefined);
    return next;
  }

  async #open(strict: boolean): Promise<void> {
    if (this.#closed) return;
    const filter = { ...this.lists, ...(this.#uris.size > 0 ? { resourceSubscriptions: [...this.#uris] } : {}) };
    const previous = this.#current;
    if (!Object.values(this.lists).some(Boolean) && this.#uris.size === 0) {
      this.#current = undefined;
      void previous?.close().catch(() => undefined);
      return;
    }
    let subscription: McpSubscription;
    try {
      subscription = await this.client.listen(filter);
    } catch (err) {
      if (this.#closed) return;
      this.log?.warn({ err: errorMessage(err) }, 'subscriptions/listen failed; list changes and resource updates will not be seen');
      if (strict) throw err;
      return;
    }
    if (this.#closed) {
      void subscription.close().catch(() => undefined);
      return;
    }
    this.#current = subscription;
    void previous?.close().catch(() => undefined);
    void subscription.closed.then((how) => {
      if (how === 'remote' && this.#current === subscription && !this.#closed) this.onRemoteEnd(new Error('the subscriptions/listen stream ended'));
    });
  }
}
