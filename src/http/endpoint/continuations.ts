import { randomBytes } from 'node:crypto';
import type { Progress } from '@modelcontextprotocol/server';
import { SwitchboardError } from '../../errors.js';
import { deferred, type Deferred } from '../../util/deferred.js';
import type { AgentRequest } from '../../upstream/transport/server-traffic.js';

/**
 * Multi-round requests of 2026-07-28 callers (SPEC §7, the revision's `input_required`).
 *
 * A modern-era caller has no channel on which Switchboard could ask it anything in the middle of
 * a request. So when the server behind a call asks (sampling, elicitation, roots — as a request
 * of the 2025 era or as its own `input_required` round), the call keeps running here, parked, and
 * the caller's request ends with an `input_required` result naming what is asked and a
 * `requestState` token. The caller's retry carries the answers and the token: the answers go to
 * the waiting server, and the retry waits for what comes next — the result, or the next question.
 */

/** How long a parked call waits for the caller's retry before it is cancelled. @default 600000 */
export const PARKED_TTL_MS = 10 * 60_000;
/** Parked calls at once; beyond, a server's question in a modern call is refused. @default 1000 */
export const MAX_PARKED = 1_000;

/** The downstream request attached to a continuation right now (one round). */
export interface Round {
  /** Sends progress to the caller; absent when the round's request asked for none. */
  progress?: (progress: Progress) => void;
  /** Sends a log message to the caller (already filtered to its level). */
  log?: (params: Record<string, unknown>) => void;
}

export type RoundOutcome<T> =
  { kind: 'done'; value: T } | { kind: 'failed'; error: unknown } | { kind: 'input'; requests: Record<string, { method: AgentRequest; params?: Record<string, unknown> }> };

interface Question {
  method: AgentRequest;
  params: Record<string, unknown> | undefined;
  answer: Deferred<Record<string, unknown>>;
  /** Delivered to the caller in a round that ended; re-sent when a retry does not answer it. */
  sent: boolean;
}

export class Continuation<T> {
  #token: string | undefined;
  readonly controller = new AbortController();
  readonly #questions = new Map<string, Question>();
  #asked = 0;
  #wake: Deferred<void> | undefined;
  #settled: { kind: 'done'; value: T } | { kind: 'failed'; error: unknown } | undefined;
  #round: Round | undefined;
  #lastProgress = -Infinity;

  /** @param tokenPrefix names the replica holding the call (issue #28), so a retry reaching another one is forwarded here */
  constructor(
    work: (continuation: Continuation<T>) => Promise<T>,
    private readonly tokenPrefix = '',
  ) {
    work(this).then(
      (value) => this.#settle({ kind: 'done', value }),
      (error: unknown) => this.#settle({ kind: 'failed', error }),
    );
  }

  /**
   * The `requestState` of this call: unguessable, so only its caller can continue it. Drawn when
   * first needed: most calls never ask their agent anything (issue #17, per-call cost).
   */
  get token(): string {
    return (this.#token ??= this.tokenPrefix + randomBytes(18).toString('base64url'));
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get settled(): boolean {
    return this.#settled !== undefined;
  }

  /** A question of the server: resolves with the caller's answer, from a later round. */
  ask(method: AgentRequest, params: Record<string, unknown> | undefined, signal: AbortSignal): Promise<Record<string, unknown>> {
    this.#asked += 1;
    const key = `${method.replace(/\W+/g, '_')}_${this.#asked}`;
    const question: Question = { method, params, answer: deferred(), sent: false };
    this.#questions.set(key, question);
    const onAbort = (): void => {
      this.#questions.delete(key);
      question.answer.reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    void question.answer.promise.then(
      () => signal.removeEventListener('abort', onAbort),
      () => signal.removeEventListener('abort', onAbort),
    );
    this.#wake?.resolve();
    return question.answer.promise;
  }

  /** Progress of the server: to the round in progress, never backwards (a retried call restarts). */
  progress(progress: Progress): void {
    if (progress.progress <= this.#lastProgress) return;
    this.#lastProgress = progress.progress;
    this.#round?.progress?.(progress);
  }

  log(params: Record<string, unknown>): void {
    this.#round?.log?.(params);
  }

  /** The answers a retry carried; keys this call never asked (or already has) are ignored. */
  answer(responses: Record<string, unknown> | undefined): void {
    for (const [key, response] of Object.entries(responses ?? {})) {
      const question = this.#questions.get(key);
      if (!question || typeof response !== 'object' || response === null) continue;
      this.#questions.delete(key);
      question.answer.resolve(response as Record<string, unknown>);
    }
    // Questions the retry left unanswered are asked again (the revision's "re-request").
    for (const question of this.#questions.values()) question.sent = false;
  }

  /**
   * Attaches a round and waits for what ends it: the call's outcome, or questions not yet sent.
   * The round's own cancellation cancels the call.
   */
  async next(round: Round, signal: AbortSignal): Promise<RoundOutcome<T>> {
    this.#round = round;
    this.#lastProgress = -Infinity;
    const onAbort = (): void => this.controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    try {
      for (;;) {
        if (this.#settled) return this.#settled;
        const unsent = [...this.#questions].filter(([, q]) => !q.sent);
        if (unsent.length > 0) {
          for (const [, question] of unsent) question.sent = true;
          return {
            kind: 'input',
            requests: Object.fromEntries(unsent.map(([key, q]) => [key, { method: q.method, ...(q.params ? { params: q.params } : {}) }])),
          };
        }
        this.#wake = deferred();
        await this.#wake.promise;
        this.#wake = undefined;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#round = undefined;
    }
  }

  #settle(outcome: { kind: 'done'; value: T } | { kind: 'failed'; error: unknown }): void {
    this.#settled = outcome;
    for (const question of this.#questions.values()) question.answer.reject(new SwitchboardError('SERVER_CLOSED', 'The call ended'));
    this.#questions.clear();
    this.#wake?.resolve();
  }
}

/**
 * The parked calls, by token. A call is parked between rounds only; one whose caller never comes
 * back is cancelled after `ttlMs`, so nothing waits for an answer forever.
 */
export class Continuations {
  readonly #parked = new Map<string, { continuation: Continuation<unknown>; timer: NodeJS.Timeout }>();

  constructor(
    private readonly ttlMs = PARKED_TTL_MS,
    private readonly max = MAX_PARKED,
    /** Put before every token: `<replica id>.` in a cluster (util/replica-id.ts), else nothing. */
    readonly tokenPrefix = '',
  ) {}

  get size(): number {
    return this.#parked.size;
  }

  /** Whether another call may park (so a server's question can be relayed at all). */
  get hasRoom(): boolean {
    return this.#parked.size < this.max;
  }

  park(continuation: Continuation<unknown>): void {
    const timer = setTimeout(() => {
      this.#parked.delete(continuation.token);
      continuation.controller.abort(new SwitchboardError('TOOL_CALL_TIMEOUT', `Nobody answered within ${this.ttlMs} ms; the call was cancelled`));
    }, this.ttlMs);
    timer.unref();
    this.#parked.set(continuation.token, { continuation, timer });
  }

  /** The parked call this token continues, taken out of the table; undefined when none. */
  take<T>(token: string): Continuation<T> | undefined {
    const entry = this.#parked.get(token);
    if (!entry) return undefined;
    clearTimeout(entry.timer);
    this.#parked.delete(token);
    return entry.continuation as Continuation<T>;
  }

  /** Cancels every parked call (shutdown). */
  abortAll(reason: unknown): void {
    for (const { continuation, timer } of this.#parked.values()) {
      clearTimeout(timer);
      continuation.controller.abort(reason);
    }
    this.#parked.clear();
  }
}
