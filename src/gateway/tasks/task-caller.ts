import type { ClientCapabilities } from '@modelcontextprotocol/client';
import { SwitchboardError } from '../../errors.js';
import { deferred, type Deferred } from '../../util/deferred.js';
import { capabilityOf, type CallerChannel } from '../../upstream/transport/caller.js';
import type { AgentRequest } from '../../upstream/transport/server-traffic.js';
import type { TaskInputRequest } from './task-record.js';

/**
 * The agent side of a task's call (issue #41). Nobody is on the line while a task runs, so what the
 * server asks mid-call (elicitation, sampling, roots — as a 2025-era request or a modern server's
 * own `input_required`, which the upstream side turns into such requests for a caller that does
 * not take them itself) becomes one of the task's `inputRequests`, keyed by an id minted here; the
 * client's `tasks/update` answers it by that key, and the server gets the answer.
 */
export class TaskCaller implements CallerChannel {
  readonly takesInputRequired = false;
  /** Log messages have nobody to go to: a task keeps only its status and outcome. */
  readonly logLevel = undefined;
  readonly #questions = new Map<string, { request: TaskInputRequest; answer: Deferred<Record<string, unknown>> }>();
  #asked = 0;

  constructor(
    readonly agent: string,
    readonly capabilities: ClientCapabilities | undefined,
    /** Called whenever the set of open questions changes. */
    private readonly onQuestions: (open: Record<string, TaskInputRequest>) => void,
  ) {}

  can(method: AgentRequest): boolean {
    return this.capabilities?.[capabilityOf(method)] !== undefined;
  }

  request(method: AgentRequest, params: Record<string, unknown> | undefined, signal: AbortSignal): Promise<Record<string, unknown>> {
    this.#asked += 1;
    const key = `${method.replace(/\W+/g, '_')}_${this.#asked}`;
    const question = { request: { method, ...(params ? { params } : {}) }, answer: deferred<Record<string, unknown>>() };
    this.#questions.set(key, question);
    const onAbort = (): void => {
      if (this.#questions.delete(key)) this.onQuestions(this.open());
      question.answer.reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const settled = (): void => signal.removeEventListener('abort', onAbort);
    void question.answer.promise.then(settled, settled);
    this.onQuestions(this.open());
    return question.answer.promise;
  }

  log(): void {}

  /** The questions still waiting for an answer. */
  open(): Record<string, TaskInputRequest> {
    return Object.fromEntries([...this.#questions].map(([key, q]) => [key, q.request]));
  }

  /** The client's answers; keys never asked (or already answered) are ignored. Returns how many were taken. */
  answer(responses: Record<string, unknown>): number {
    let taken = 0;
    for (const [key, response] of Object.entries(responses)) {
      const question = this.#questions.get(key);
      if (!question || typeof response !== 'object' || response === null) continue;
      this.#questions.delete(key);
      question.answer.resolve(response as Record<string, unknown>);
      taken += 1;
    }
    if (taken > 0) this.onQuestions(this.open());
    return taken;
  }

  /** The task ended: nothing is waiting for an answer any more. */
  close(): void {
    for (const question of this.#questions.values()) question.answer.reject(new SwitchboardError('SERVER_CLOSED', 'The task ended'));
    this.#questions.clear();
  }
}
