import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { sdk } from '../../upstream/sdk.js';
import { z } from 'zod';
import { SwitchboardError } from '../../errors.js';
import type { TaskStore } from '../../store/task-store.js';
import type { MCPManager } from '../../upstream/manager.js';
import { globMatcher } from '../../util/glob-matcher.js';
import type { Clock } from '../../util/clock.js';
import type { AgentRef } from '../agents/agent-ref.js';
import type { RequestOptions, RequestResult } from '../requests/pipeline.js';
import type { AgentRequest } from '../requests/request-router.js';
import type { TaskRecord, TaskStatus } from './task-record.js';
import type { TaskSupport } from './task-support.js';

/**
 * A server's own tasks, passed through (issue #41): a 2025-11-25 server that declares
 * `capabilities.tasks.requests.tools.call` and lists a tool with `execution.taskSupport` runs that
 * tool as its own task when a task-capable agent asks for one. The call goes to the server WITH
 * its `task` param, through the one request path (`gateway.request`: view, limits, policies,
 * approvals, audit); the server's `CreateTaskResult` comes back under an id of ours, recorded in
 * the task store with the server and the server's id — so the task is its agent's alone (another
 * agent gets `TASK_NOT_FOUND`), and any replica can route `tasks/get`, `tasks/result`,
 * `tasks/cancel` to that server (each a request along the same path). The server answers for the
 * task's state; the record keeps the last state seen, for `tasks/list`.
 */

/** A 2025-11-25 `Task` as a server answers it; the rest of it passes through. */
const WireTask = z.looseObject({
  taskId: z.string().min(1),
  status: z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']),
  ttl: z.number().nullable().optional(),
  pollInterval: z.number().optional(),
});
const CreateAnswer = z.looseObject({ task: WireTask });
const FINISHED: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

export interface NativeTasksOptions {
  /** The one request path (`gateway.request`). */
  request: (request: AgentRequest, options: RequestOptions) => Promise<RequestResult>;
  manager: Pick<MCPManager, 'catalogues' | 'upstream'>;
  store: TaskStore;
  clock: Clock;
  /** This replica's id: our task ids name it, as the gateway's own do. */
  replica: string;
  /** How long a record is kept when the server's task has no `ttl`, in ms. */
  ttlMs: number;
}

/** A task-augmented `tools/call` to pass through. */
export interface NativeStart {
  name: string;
  arguments: Record<string, unknown> | undefined;
  /** The call's `params.task` as the client sent it (`{ttl?}`). */
  task: Record<string, unknown>;
  options: RequestOptions;
  /** Told each status the server sends for the task (a 2025-11-25 session's `notifications/tasks/status`). */
  onStatus?: StatusListener;
}

/** A status change of a server's own task, under our id; `stop` ends the watch. */
export type StatusListener = (task: Record<string, unknown>, stop: () => void) => void;

export class NativeTasks {
  constructor(private readonly options: NativeTasksOptions) {}

  /**
   * The tool's own task support when its server runs tasks itself (a connected 2025-era server
   * declaring task-augmented `tools/call`) and the operator's `tasks` globs leave it to the server;
   * undefined otherwise (a gateway-run task or a plain call), and outside the caller's view.
   */
  supportOf(name: string, agent: AgentRef | undefined): TaskSupport | undefined {
    const { manager } = this.options;
    const tool = manager.catalogues.tools.get(name);
    if (!tool || (agent?.view && !agent.view.allowsTool(tool))) return undefined;
    const upstream = manager.upstream(tool.server);
    if (!upstream?.connection || upstream.connection.era !== 'legacy' || !upstream.capabilities?.tasks?.requests?.tools?.call) return undefined;
    const settings = upstream.config.tasks;
    if (settings && globMatcher(settings.tools)(tool.originalName)) return undefined;
    const support = tool.execution?.taskSupport;
    return support === 'optional' || support === 'required' ? support : undefined;
  }

  /**
   * Sends the task-augmented call; the server's `CreateTaskResult` under our id once recorded. A
   * server that answered a plain result after all (it may ignore `task`) is answered as it is.
   */
  async create(start: NativeStart): Promise<RequestResult> {
    const answer = await this.options.request({ method: 'tools/call', name: start.name, arguments: start.arguments, task: start.task }, start.options);
    const parsed = CreateAnswer.safeParse(answer);
    if (!parsed.success) return answer;
    const tool = this.options.manager.catalogues.tools.get(start.name);
    const { replica } = this.options;
    const task = parsed.data.task;
    const record: TaskRecord = {
      taskId: `${replica ? `${replica}.` : ''}${randomBytes(18).toString('base64url')}`,
      agent: start.options.agent?.name ?? '',
      tool: start.name,
      status: task.status,
      createdAt: typeof task.createdAt === 'string' ? task.createdAt : new Date(this.options.clock.now()).toISOString(),
      lastUpdatedAt: typeof task.lastUpdatedAt === 'string' ? task.lastUpdatedAt : new Date(this.options.clock.now()).toISOString(),
      ttlMs: task.ttl ?? this.options.ttlMs,
      pollIntervalMs: task.pollInterval ?? 1_000,
      replica,
      native: { server: tool?.server ?? '', taskId: task.taskId },
    };
    await this.#save(record);
    if (start.onStatus) this.watch(record, start.onStatus);
    return { ...parsed.data, task: { ...task, taskId: record.taskId } };
  }

  /**
   * A server's own task run to its end inside a gateway task (an extension client's, which follows
   * the gateway's task, not the server's): the task-augmented call, then `tasks/result` with no
   * deadline but the task's signal; when that signal cancels it, `tasks/cancel` at the server too.
   * The result is the tool's own, without the server's `related-task` mark (its id is not ours).
   */
  async runToEnd(name: string, args: Record<string, unknown> | undefined, options: RequestOptions): Promise<CallToolResult> {
    // The creation is not cancelled midway: a call cancelled after the server made its task would
    // leave that task running with nobody knowing its id. A cancel meanwhile cancels it once known.
    const { signal, ...unsignalled } = options;
    const answer = await this.options.request({ method: 'tools/call', name, arguments: args, task: {} }, unsignalled);
    const parsed = CreateAnswer.safeParse(answer);
    if (!parsed.success) return answer as CallToolResult;
    const target = { server: this.options.manager.catalogues.tools.get(name)?.server ?? '', taskId: parsed.data.task.taskId };
    try {
      const result = await this.options.request({ method: 'tasks/result', ...target }, { ...options, timeoutMs: 0 });
      const { [sdk().RELATED_TASK_META_KEY]: _server, ...meta } = (result._meta as Record<string, unknown> | undefined) ?? {};
      return (Object.keys(meta).length > 0 ? { ...result, _meta: meta } : withoutMeta(result)) as CallToolResult;
    } catch (err) {
      if (signal?.aborted) await this.options.request({ method: 'tasks/cancel', ...target }, unsignalled).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Tells `listener` each `notifications/tasks/status` the server sends for the task, under our id
   * (the server's session is every agent's: only this task's are passed on). Ends at a finished
   * status, when `listener` calls its `stop` (its session has gone), at the record's TTL, or with
   * the connection.
   */
  watch(record: TaskRecord, listener: StatusListener): void {
    const { native } = record;
    const connection = native ? this.options.manager.upstream(native.server)?.connection : undefined;
    if (!native || !connection) return;
    const timer = this.options.clock.setTimeout(() => end(), record.ttlMs);
    const off = connection.onNotification('notifications/tasks/status', (params) => {
      if (params.taskId !== native.taskId) return;
      listener({ ...params, taskId: record.taskId }, end);
      if (FINISHED.has(params.status as TaskStatus)) end();
    });
    const end = (): void => {
      this.options.clock.clearTimeout(timer);
      off();
    };
  }

  /** `tasks/get` at the server: its `Task`, under our id. */
  async get(record: TaskRecord, options: RequestOptions): Promise<RequestResult> {
    return this.#seen(record, await this.#ask('tasks/get', record, options));
  }

  /** `tasks/cancel` at the server: its `Task`, now cancelled (or its refusal of a finished one). */
  async cancel(record: TaskRecord, options: RequestOptions): Promise<RequestResult> {
    return this.#seen(record, await this.#ask('tasks/cancel', record, options));
  }

  /** `tasks/result` at the server: waits as the server waits (no deadline but the client's), its answer marked as our task's. */
  async result(record: TaskRecord, options: RequestOptions): Promise<RequestResult> {
    const payload = await this.#ask('tasks/result', record, { ...options, timeoutMs: 0 });
    const meta = payload._meta as Record<string, unknown> | undefined;
    if (!meta?.[sdk().RELATED_TASK_META_KEY]) return payload;
    return { ...payload, _meta: { ...meta, [sdk().RELATED_TASK_META_KEY]: { taskId: record.taskId } } };
  }

  /** `tasks/list`'s entry of each record: the server's current `Task` where it answers, else the state last seen. */
  async refresh(record: TaskRecord, options: RequestOptions): Promise<RequestResult | undefined> {
    try {
      return await this.get(record, options);
    } catch {
      return undefined;
    }
  }

  #ask(method: 'tasks/get' | 'tasks/result' | 'tasks/cancel', record: TaskRecord, options: RequestOptions): Promise<RequestResult> {
    const { native } = record;
    if (!native) throw new SwitchboardError('TASK_NOT_FOUND', `No task "${record.taskId}"`);
    return this.options.request({ method, server: native.server, taskId: native.taskId }, options);
  }

  /** The server's `Task` under our id; the record keeps its status (best effort). */
  async #seen(record: TaskRecord, answer: RequestResult): Promise<RequestResult> {
    const parsed = WireTask.safeParse(answer);
    if (!parsed.success) return answer;
    if (parsed.data.status !== record.status) {
      const status: TaskStatus = parsed.data.status;
      await this.#save({ ...record, status, lastUpdatedAt: typeof parsed.data.lastUpdatedAt === 'string' ? parsed.data.lastUpdatedAt : record.lastUpdatedAt });
    }
    return { ...answer, taskId: record.taskId };
  }

  #save(record: TaskRecord): Promise<void> {
    const now = this.options.clock.now();
    return this.options.store.put(record.taskId, JSON.stringify(record), now + record.ttlMs, now);
  }
}

function withoutMeta(result: RequestResult): RequestResult {
  const { _meta: _none, ...rest } = result;
  return rest;
}
