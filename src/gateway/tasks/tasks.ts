import { randomBytes } from 'node:crypto';
import type { CallToolResult, ClientCapabilities } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import { errorMessage, isSwitchboardError, SwitchboardError } from '../../errors.js';
import { ERROR_META_KEY } from '../../upstream/catalogue/tool-bridge.js';
import { systemClock, type Clock } from '../../util/clock.js';
import { waitFor } from '../../util/wait-for.js';
import { MemoryTaskStore, type TaskStore } from '../../store/task-store.js';
import type { AgentRef } from '../agents/agent-ref.js';
import type { RequestOptions } from '../requests/pipeline.js';
import { isTerminal, type TaskError, type TaskRecord, type TaskStatus } from './task-record.js';
import { TaskCaller } from './task-caller.js';
import { taskSupportOf, type TaskSupport } from './task-support.js';
import type { MCPManager } from '../../upstream/manager.js';

/** How long a task is kept after its last change, in ms. @default 3600000 */
export const TASK_TTL_MS = 60 * 60_000;
/** The poll interval a task suggests to its client, in ms. @default 1000 */
export const TASK_POLL_INTERVAL_MS = 1_000;

/** JSON-RPC InternalError: what a call that failed outside the tool itself is told as. */
const INTERNAL_ERROR = -32603;

/** What the daemon chooses of the tasks: where they are kept, and this replica's id. */
export interface TaskSettings {
  /** @default in memory */
  store?: TaskStore;
  /** This replica's id in a cluster: task ids name it, so their updates reach it. @default '' */
  replica?: string;
  /** @default TASK_TTL_MS */
  ttlMs?: number;
  /** @default TASK_POLL_INTERVAL_MS */
  pollIntervalMs?: number;
}

export interface TasksOptions extends TaskSettings {
  /** The one request path: a task's call is `gateway.call`. */
  call: (name: string, args: Record<string, unknown> | undefined, options: RequestOptions) => Promise<CallToolResult>;
  /** Which tools run as tasks: their servers' `tasks` settings. */
  manager: Pick<MCPManager, 'catalogues' | 'upstream'>;
  logger: Logger;
  /** @default the system clock */
  clock?: Clock;
}

/** A task to start: the tool as the agent named it, and who asks. */
export interface TaskStart {
  name: string;
  arguments: Record<string, unknown> | undefined;
  agent: AgentRef | undefined;
  /** What the client declared it can be asked (the server's questions become the task's input requests). */
  capabilities: ClientCapabilities | undefined;
  trace?: RequestOptions['trace'];
  /** Told each status change while the call runs here (a 2025-11-25 session's `notifications/tasks/status`). */
  onStatus?: (task: TaskRecord) => void;
  /** Runs the task's call instead of `gateway.call` (a server's own task, run to its end: native-tasks.ts). @default the plain call */
  run?: (options: RequestOptions) => Promise<CallToolResult>;
}

/** A task whose call runs on this replica. */
interface Running {
  record: TaskRecord;
  controller: AbortController;
  caller: TaskCaller;
  /** Woken at its next status change (a 2025-11-25 `tasks/result` waits on them). */
  waiters: Set<() => void>;
  onStatus: ((task: TaskRecord) => void) | undefined;
}

/**
 * Gateway-run tasks (issue #41, SEP-2663): a tool call that answers at once with a task, runs on
 * through the one request path (`gateway.call`: limits, budgets, approvals, the result guard, the
 * audit), belongs to its agent, outlives the client's request, and is kept with its outcome in
 * the store for its TTL. `get`, `update` and `cancel` are the client's; another agent's task is
 * unknown to it (`TASK_NOT_FOUND`), as an expired one is.
 */
export class Tasks {
  readonly #running = new Map<string, Running>();
  /** Each task's latest store write: the next waits for it, so the store ends with the last state. */
  readonly #saves = new Map<string, Promise<void>>();
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #pollIntervalMs: number;
  readonly #store: TaskStore;

  constructor(private readonly options: TasksOptions) {
    this.#store = options.store ?? new MemoryTaskStore();
    this.#clock = options.clock ?? systemClock;
    this.#ttlMs = options.ttlMs ?? TASK_TTL_MS;
    this.#pollIntervalMs = options.pollIntervalMs ?? TASK_POLL_INTERVAL_MS;
  }

  /** Tasks whose calls run here now. */
  get running(): number {
    return this.#running.size;
  }

  /** Whether a tool, as `agent` names it, runs as a task (its server's `tasks`); undefined for a plain call. */
  supportOf(name: string, agent: AgentRef | undefined): TaskSupport | undefined {
    return taskSupportOf(this.options.manager, name, agent?.view);
  }

  /** Creates the task, stores it (so a `tasks/get` right after finds it), and starts its call. */
  async create(start: TaskStart): Promise<TaskRecord> {
    const now = new Date(this.#clock.now()).toISOString();
    const replica = this.options.replica ?? '';
    const record: TaskRecord = {
      taskId: `${replica ? `${replica}.` : ''}${randomBytes(18).toString('base64url')}`,
      agent: start.agent?.name ?? '',
      tool: start.name,
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: this.#ttlMs,
      pollIntervalMs: this.#pollIntervalMs,
      replica,
    };
    const controller = new AbortController();
    const caller = new TaskCaller(start.agent?.name ?? 'task', start.capabilities, (open) => {
      if (isTerminal(record.status)) return;
      const waiting = Object.keys(open).length > 0;
      if (waiting) record.inputRequests = open;
      else delete record.inputRequests;
      this.#change(record, waiting ? 'input_required' : 'working');
    });
    this.#running.set(record.taskId, { record, controller, caller, waiters: new Set(), onStatus: start.onStatus });
    await this.#save(record);
    const options: RequestOptions = {
      transport: 'mcp',
      signal: controller.signal,
      caller,
      ...(start.agent ? { agent: start.agent } : {}),
      ...(start.trace ? { trace: start.trace } : {}),
    };
    const run = start.run ?? ((opts: RequestOptions) => this.options.call(start.name, start.arguments, opts));
    void run(options).then(
      (result) => void this.#finish(record, outcomeOf(result)),
      (err: unknown) => void this.#finish(record, controller.signal.aborted ? { status: 'cancelled' } : { status: 'failed', error: errorOf(err) }),
    );
    return { ...record };
  }

  /** The task as its agent may see it; `TASK_NOT_FOUND` for anyone else, unknown or expired ids. */
  async get(taskId: string, agent: AgentRef | undefined): Promise<TaskRecord> {
    const record = await this.#find(taskId);
    if (!record || record.agent !== (agent?.name ?? '')) throw notFound(taskId);
    return record;
  }

  /**
   * The task once `done` accepts it (a 2025-11-25 `tasks/result`: finished, or waiting for
   * input): at once when it does, else at its next change here, or — run by another replica — as
   * the store shows it (read at its `pollIntervalMs`, on the clock). Rejects with `signal`'s
   * reason when the request goes away first.
   */
  async until(taskId: string, agent: AgentRef | undefined, signal: AbortSignal, done: (task: TaskRecord) => boolean): Promise<TaskRecord> {
    for (;;) {
      if (signal.aborted) throw signal.reason;
      // Listening before reading: a change in between still wakes this wait.
      const running = this.#running.get(taskId);
      let wake = (): void => undefined;
      const changed = new Promise<void>((resolve) => (wake = resolve));
      running?.waiters.add(wake);
      try {
        const record = await this.get(taskId, agent);
        if (done(record)) return record;
        const pollMs = running ? undefined : Math.max(50, record.pollIntervalMs);
        await waitFor(changed, { signal, deadlineMs: pollMs, clock: this.#clock });
      } finally {
        running?.waiters.delete(wake);
      }
    }
  }

  /** The agent's tasks still kept, newest first (a 2025-11-25 `tasks/list`). */
  async list(agent: AgentRef | undefined): Promise<TaskRecord[]> {
    const name = agent?.name ?? '';
    const byId = new Map<string, TaskRecord>();
    for (const document of await this.#store.list(name, this.#clock.now())) {
      const record = JSON.parse(document) as TaskRecord;
      byId.set(record.taskId, record);
    }
    for (const running of this.#running.values()) if (running.record.agent === name) byId.set(running.record.taskId, { ...running.record });
    return [...byId.values()].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }

  /** The task whoever owns it: the operator's `GET /tasks/:id`. */
  async inspect(taskId: string): Promise<TaskRecord> {
    const record = await this.#find(taskId);
    if (!record) throw notFound(taskId);
    return record;
  }

  /** Answers some or all of a waiting task's input requests (`tasks/update`). */
  async update(taskId: string, agent: AgentRef | undefined, inputResponses: Record<string, unknown>): Promise<void> {
    await this.get(taskId, agent);
    this.#running.get(taskId)?.caller.answer(inputResponses);
  }

  /** Cancels a task's call (`tasks/cancel`); a task already finished is left as it is. */
  async cancel(taskId: string, agent: AgentRef | undefined): Promise<void> {
    const record = await this.get(taskId, agent);
    if (isTerminal(record.status)) return;
    const running = this.#running.get(taskId);
    if (!running) {
      // Its call ran on a replica that is gone (a cancel is routed to the one running it): nothing runs it any more.
      record.status = 'cancelled';
      record.statusMessage = 'Cancelled by the client; the replica running it had gone';
      record.lastUpdatedAt = new Date(this.#clock.now()).toISOString();
      delete record.inputRequests;
      await this.#save(record);
      return;
    }
    const saved = this.#finish(running.record, { status: 'cancelled', statusMessage: 'Cancelled by the client' });
    running.controller.abort(new SwitchboardError('TOOL_CALL_TIMEOUT', 'The task was cancelled'));
    // Answered once the store has it: a replica asked next (the client's cancel may have come through one) reads cancelled.
    await saved;
  }

  /** Cancels every running task (shutdown). */
  abortAll(reason: unknown): void {
    for (const running of [...this.#running.values()]) running.controller.abort(reason);
  }

  async #find(taskId: string): Promise<TaskRecord | undefined> {
    const running = this.#running.get(taskId);
    if (running) return { ...running.record };
    const document = await this.#store.get(taskId, this.#clock.now());
    return document === undefined ? undefined : (JSON.parse(document) as TaskRecord);
  }

  /** Settles when the store has the outcome. */
  #finish(record: TaskRecord, outcome: Pick<TaskRecord, 'status' | 'result' | 'error' | 'statusMessage'>): Promise<void> {
    if (isTerminal(record.status)) return Promise.resolve();
    delete record.inputRequests;
    if (outcome.result) record.result = outcome.result;
    if (outcome.error) record.error = outcome.error;
    if (outcome.statusMessage) record.statusMessage = outcome.statusMessage;
    const running = this.#running.get(record.taskId);
    this.#change(record, outcome.status);
    running?.caller.close();
    // Kept in memory until the store has it, so a poll in between still finds the outcome.
    const saved = this.#save(record);
    void saved.finally(() => this.#running.delete(record.taskId));
    return saved;
  }

  #change(record: TaskRecord, status: TaskStatus): void {
    record.status = status;
    record.lastUpdatedAt = new Date(this.#clock.now()).toISOString();
    this.options.logger.debug({ task: record.taskId, tool: record.tool, status }, 'task status');
    const running = this.#running.get(record.taskId);
    running?.onStatus?.({ ...record });
    for (const wake of running?.waiters ?? []) wake();
    running?.waiters.clear();
    if (!isTerminal(status)) void this.#save(record);
  }

  /**
   * Writes the task as it is now, after its previous write: two writes in flight at once (a status
   * change, then the outcome) could land in either order on PostgreSQL's pool, leaving the store
   * at the older state.
   */
  #save(record: TaskRecord): Promise<void> {
    const now = this.#clock.now();
    const document = JSON.stringify(record);
    const previous = this.#saves.get(record.taskId) ?? Promise.resolve();
    const saved = previous.catch(() => undefined).then(() => this.#store.put(record.taskId, document, now + record.ttlMs, now));
    this.#saves.set(record.taskId, saved);
    const forget = (): void => void (this.#saves.get(record.taskId) === saved && this.#saves.delete(record.taskId));
    saved.then(forget, forget);
    return saved;
  }
}

function notFound(taskId: string): SwitchboardError {
  return new SwitchboardError('TASK_NOT_FOUND', `No task "${taskId}"`);
}

/**
 * A tool that ran and said it failed is a completed task with an `isError` result (SEP-2663);
 * a call the gateway or the server could not carry out (its failure has our code in `_meta`) is a
 * failed task with the error inlined.
 */
function outcomeOf(result: CallToolResult): Pick<TaskRecord, 'status' | 'result' | 'error'> {
  const ours = result.isError ? (result._meta?.[ERROR_META_KEY] as { code?: string } | undefined) : undefined;
  if (ours?.code) {
    const text = result.content.find((part) => part.type === 'text');
    return { status: 'failed', error: { code: INTERNAL_ERROR, message: text?.type === 'text' ? text.text : ours.code, data: { code: ours.code } } };
  }
  return { status: 'completed', result: result as Record<string, unknown> };
}

function errorOf(err: unknown): TaskError {
  if (isSwitchboardError(err)) return { code: INTERNAL_ERROR, message: err.message, data: { code: err.code } };
  return { code: INTERNAL_ERROR, message: errorMessage(err) };
}
