import { EventEmitter } from 'node:events';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { pino, type Logger } from 'pino';
import type { ServerConfig, ServerSource } from '../config/types.js';
import { validateServerConfig } from '../config/validate.js';
import { errorMessage, SwitchboardError } from '../errors.js';
import { configHash } from '../store/config-hash.js';
import { NoopToolCacheStore, type ToolCacheStore } from '../store/tool-cache-store.js';
import { abortable } from '../util/abort.js';
import { connectToServer, resolveConnectTimeout, type ConnectOptions, type ServerConnection } from './client.js';
import type { ManagerEvent, OperationEvent, ServerStatus, ToolsChangedCause } from './events.js';
import {
  newServerRecord,
  snapshotOf,
  type ServerDetail,
  type ServerRecord,
  type ServerSnapshot,
} from './server-record.js';
import { passStartupGate, type ConnectTask } from './startup-gate.js';
import { callUpstreamTool, type ToolCallOptions } from './tool-call.js';
import { ToolCatalogue } from './tool-catalogue.js';
import { filterTools } from './tool-filter.js';

/** Resolves `!cmd` values and credentials on a copy of a config just before connecting. */
export type ResolveValues = (name: string, config: ServerConfig, source: ServerSource) => Promise<ServerConfig>;

export interface ManagerOptions {
  logger?: Logger;
  /** @default a store that caches nothing */
  store?: ToolCacheStore;
  /** How long `connectServers` waits before serving cached tools of slow servers. @default 250 */
  startupGateMs?: number;
  /** @default connectToServer */
  connect?: typeof connectToServer;
  /** @default the config unchanged */
  resolveValues?: ResolveValues;
  /** Passed to every connect (roots, inheritEnv, clientInfo). */
  connectOptions?: Pick<ConnectOptions, 'roots' | 'inheritEnv' | 'clientInfo'>;
  /** Where `SWITCHBOARD_MCP_TIMEOUT_MS` is read. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** @default Date.now */
  now?: () => number;
}

export interface ServerError {
  server: string;
  error: string;
}

export interface ConnectSummary {
  errors: ServerError[];
}

const DEFAULT_CALL_TIMEOUT_MS = 60_000;
const UNKNOWN_SOURCE: ServerSource = { provider: 'api', providerName: 'API', path: '', level: 'native' };

/**
 * Owns every upstream connection: connects in parallel behind the startup gate, keeps each
 * server's tools, and changes one server at a time so nobody else's tools ever flicker.
 */
export class MCPManager {
  private readonly servers = new Map<string, ServerRecord>();
  private readonly emitter = new EventEmitter();
  private readonly catalogue = new ToolCatalogue();
  private readonly log: Logger;
  private readonly store: ToolCacheStore;
  private readonly connect: typeof connectToServer;
  private readonly resolveValues: ResolveValues;
  private readonly startupGateMs: number;
  private readonly env: NodeJS.ProcessEnv;
  private readonly now: () => number;

  constructor(private readonly options: ManagerOptions = {}) {
    this.log = options.logger ?? pino({ level: 'silent' });
    this.store = options.store ?? new NoopToolCacheStore();
    this.connect = options.connect ?? connectToServer;
    this.resolveValues = options.resolveValues ?? ((_name, config) => Promise.resolve(config));
    this.startupGateMs = options.startupGateMs ?? 250;
    this.env = options.env ?? process.env;
    this.now = options.now ?? Date.now;
    // Subscribers are the WebSocket feed and tests; a listener count warning would be noise.
    this.emitter.setMaxListeners(0);
  }

  /** Every event, in emission order. Returns the unsubscribe function. */
  subscribe(listener: (event: ManagerEvent) => void): () => void {
    this.emitter.on('event', listener);
    return () => this.emitter.off('event', listener);
  }

  getConnectionStatus(name: string): ServerStatus {
    return this.servers.get(name)?.status ?? 'disconnected';
  }

  hasServer(name: string): boolean {
    return this.servers.has(name);
  }

  listServers(): ServerSnapshot[] {
    return [...this.servers.values()].map(snapshotOf).sort((a, b) => a.name.localeCompare(b.name));
  }

  getServer(name: string): ServerDetail | undefined {
    const record = this.servers.get(name);
    if (!record) return undefined;
    return {
      ...snapshotOf(record),
      tools: this.catalogue.namesOf(name),
      stderrTail: record.connection ? record.connection.stderr.lines() : record.stderrTail(),
    };
  }

  /** The aggregated catalogue; `version` changes on every change of any server's tools. */
  getCatalogue(): ToolCatalogue {
    return this.catalogue;
  }

  getTools(): ReturnType<ToolCatalogue['list']> {
    return this.catalogue.list();
  }

  /**
   * Connects every server not already connected or connecting. Resolves after the startup gate:
   * finished servers serve live tools, failed ones are in `errors`, slow ones serve cached tools
   * as deferred — or, without a cache entry, are awaited.
   */
  async connectServers(
    configs: Readonly<Record<string, ServerConfig>>,
    sources: Readonly<Record<string, ServerSource>> = {},
    options: { cause?: ToolsChangedCause } = {},
  ): Promise<ConnectSummary> {
    const cause = options.cause ?? 'startup';
    const phase = { returned: false };
    const errors: ServerError[] = [];
    const tasks: ConnectTask[] = [];

    for (const [name, config] of Object.entries(configs)) {
      const existing = this.servers.get(name);
      if (existing && (existing.status === 'connected' || existing.pending)) continue;
      const record = this.upsertRecord(name, config, sources[name] ?? UNKNOWN_SOURCE);
      const problems = validateServerConfig(name, config);
      if (problems.length > 0) {
        const error = problems.join('; ');
        this.setStatus(record, 'failed', error);
        errors.push({ server: name, error });
        continue;
      }
      tasks.push(this.startConnect(record, cause, phase));
    }

    await passStartupGate(tasks, this.startupGateMs, (task) => {
      const cached = this.store.get(task.record.name, task.record.configHash);
      if (cached) this.setTools(task.record, cached.tools, { cause, deferred: true });
      return cached !== undefined;
    });

    phase.returned = true;
    for (const task of tasks) {
      if (task.outcome && !task.outcome.ok) errors.push({ server: task.record.name, error: task.outcome.error });
    }
    return { errors };
  }

  /** Resolves with the live connection, awaiting an in-flight connect. */
  async waitForConnection(name: string, signal?: AbortSignal): Promise<ServerConnection> {
    const record = this.servers.get(name);
    if (!record) throw new SwitchboardError('SERVER_NOT_FOUND', `No server named "${name}"`);
    if (record.connection) return record.connection;
    if (!record.pending) {
      const why = record.lastError ? `: ${record.lastError}` : '';
      throw new SwitchboardError('SERVER_NOT_CONNECTED', `Server "${name}" is ${record.status}${why}`);
    }
    // Only this wait is abandoned: the connect attempt is shared with other callers.
    return signal ? abortable(record.pending, signal) : record.pending;
  }

  /** Calls a tool by its exposed name; a deferred tool first waits for its server. */
  async callTool(
    exposedName: string,
    args: Record<string, unknown> | undefined,
    options: ToolCallOptions = {},
  ): Promise<CallToolResult> {
    const tool = this.catalogue.get(exposedName);
    if (!tool) throw new SwitchboardError('TOOL_NOT_FOUND', `No tool named "${exposedName}"`);
    const record = this.servers.get(tool.server);
    return callUpstreamTool((signal) => this.waitForConnection(tool.server, signal), tool.originalName, args, {
      ...options,
      defaultTimeoutMs: record?.config.callTimeout ?? DEFAULT_CALL_TIMEOUT_MS,
    });
  }

  /** Closes one server and removes exactly its tools; other servers are untouched. */
  async disconnectServer(name: string): Promise<void> {
    const record = this.servers.get(name);
    if (!record) throw new SwitchboardError('SERVER_NOT_FOUND', `No server named "${name}"`);
    await this.teardown(record);
    this.setTools(record, [], { cause: 'disconnect', deferred: false });
    this.setStatus(record, 'disconnected');
  }

  /** Closes every server (all settle, none blocks another) and clears every registry. */
  async disconnectAll(): Promise<void> {
    const records = [...this.servers.values()];
    const results = await Promise.allSettled(records.map((record) => this.disconnectServer(record.name)));
    for (const result of results) {
      if (result.status === 'rejected') this.log.warn({ err: errorMessage(result.reason) }, 'disconnect failed');
    }
    this.servers.clear();
    this.catalogue.clear();
  }

  /**
   * Aborts in-flight connects — every server's, or one — so a teardown never waits on a server
   * that is slow to answer `initialize` (with `timeout: 0`, forever).
   */
  abortConnects(reason: Error, name?: string): void {
    const records = name === undefined ? [...this.servers.values()] : [this.servers.get(name)];
    for (const record of records) record?.abort?.abort(reason);
  }

  /** Forgets a disconnected server entirely (used when a reload finds it gone from config). */
  forgetServer(name: string): void {
    const record = this.servers.get(name);
    if (record && !record.connection && !record.pending) this.servers.delete(name);
  }

  private upsertRecord(name: string, config: ServerConfig, source: ServerSource): ServerRecord {
    const hash = configHash(config);
    const existing = this.servers.get(name);
    if (existing) {
      existing.config = config;
      existing.configHash = hash;
      existing.source = source;
      return existing;
    }
    const record = newServerRecord(name, config, hash, source);
    this.servers.set(name, record);
    return record;
  }

  private startConnect(record: ServerRecord, cause: ToolsChangedCause, phase: { returned: boolean }): ConnectTask {
    const generation = ++record.generation;
    const abort = new AbortController();
    record.abort = abort;
    record.lastError = undefined;
    const pending = this.connectAndList(record, abort.signal);
    record.pending = pending.then((r) => r.connection);
    // A failed connect is reported through the task; nobody may be awaiting `pending`.
    record.pending.catch(() => undefined);
    this.setStatus(record, 'connecting');

    const task: ConnectTask = { record, done: Promise.resolve() };
    task.done = pending.then(
      ({ connection, tools, changedSinceList }) => {
        const relistNow = changedSinceList();
        if (record.generation !== generation) {
          void connection.close();
          return;
        }
        record.pending = undefined;
        record.abort = undefined;
        this.attach(record, connection);
        this.setStatus(record, 'connected');
        this.setTools(record, tools, { cause: phase.returned ? 'background' : cause, deferred: false });
        this.store.put(record.name, record.configHash, tools);
        task.outcome = { ok: true };
        if (relistNow) void this.relist(record, connection);
      },
      (err: unknown) => {
        if (record.generation !== generation) return;
        const error = errorMessage(err);
        record.pending = undefined;
        record.abort = undefined;
        task.outcome = { ok: false, error };
        this.setTools(record, [], { cause: phase.returned ? 'background' : cause, deferred: false });
        this.setStatus(record, 'failed', error);
      },
    );
    return task;
  }

  private async connectAndList(
    record: ServerRecord,
    signal: AbortSignal,
  ): Promise<{ connection: ServerConnection; tools: Tool[]; changedSinceList: () => boolean }> {
    const started = this.now();
    const resolved = await this.resolveValues(record.name, record.config, record.source);
    const timeoutMs = resolveConnectTimeout(resolved, this.env);
    const connection = await this.connect(record.name, resolved, {
      ...this.options.connectOptions,
      signal,
      timeoutMs,
      logger: this.log.child({ server: record.name }),
    });
    // A list_changed may arrive while (or just after) the first list is answered, before the
    // connection is attached; remember it so the list is fetched again instead of lost.
    let changed = false;
    const stopWatching = connection.onToolsListChanged(() => (changed = true));
    const changedSinceList = (): boolean => {
      stopWatching();
      return changed;
    };
    try {
      // No reset after the list: a notification in the same chunk as the answer lands before
      // this await resumes, and one spare relist is cheaper than a lost change.
      const tools = await connection.listTools({ signal, timeoutMs });
      this.log.info({ server: record.name, tools: tools.length, ms: this.now() - started }, 'connected');
      return { connection, tools, changedSinceList };
    } catch (err) {
      stopWatching();
      await connection.close();
      throw err;
    }
  }

  private attach(record: ServerRecord, connection: ServerConnection): void {
    record.connection = connection;
    record.connectedSince = this.now();
    record.stderrTail = () => connection.stderr.lines();
    record.detach.push(
      connection.onClose((reason) => {
        if (record.connection !== connection) return;
        this.detach(record);
        record.stale = record.tools.length > 0;
        this.catalogue.setServer(record.name, record.source.providerName, record.tools, {
          deferred: false,
          stale: record.stale,
        });
        this.setStatus(record, 'disconnected', errorMessage(reason));
      }),
      connection.onToolsListChanged(() => void this.relist(record, connection)),
    );
  }

  private async relist(record: ServerRecord, connection: ServerConnection): Promise<void> {
    try {
      const timeoutMs = resolveConnectTimeout(record.config, this.env);
      const tools = await connection.listTools({ timeoutMs });
      if (record.connection !== connection) return;
      this.setTools(record, tools, { cause: 'list_changed', deferred: false });
      this.store.put(record.name, record.configHash, tools);
    } catch (err) {
      this.log.warn({ server: record.name, err: errorMessage(err) }, 'tools/list after list_changed failed');
    }
  }

  private detach(record: ServerRecord): void {
    for (const off of record.detach.splice(0)) off();
    record.connection = undefined;
    record.connectedSince = undefined;
  }

  private async teardown(record: ServerRecord): Promise<void> {
    record.generation += 1;
    record.abort?.abort(new SwitchboardError('SERVER_CLOSED', `Server "${record.name}" was disconnected`));
    const pending = record.pending;
    record.pending = undefined;
    record.abort = undefined;
    const connection = record.connection;
    this.detach(record);
    await Promise.allSettled([connection?.close(), pending?.then((c) => c.close())]);
  }

  /**
   * Replaces one server's tools and emits the change, including a deferred → live switch, plus a
   * change for any other server whose tool a name collision renamed.
   */
  private setTools(record: ServerRecord, listed: Tool[], options: { cause: ToolsChangedCause; deferred: boolean }): void {
    const tools = filterTools(listed, record.config);
    const flagsChanged = record.deferred !== options.deferred || record.stale;
    record.tools = tools;
    record.deferred = options.deferred;
    record.stale = false;
    const diffs = this.catalogue.setServer(record.name, record.source.providerName, tools, {
      deferred: options.deferred,
      stale: false,
    });
    for (const [server, { added, removed }] of diffs) {
      const other = server !== record.name ? this.servers.get(server) : undefined;
      if (added.length === 0 && removed.length === 0 && (other || !flagsChanged)) continue;
      this.emit({
        type: 'tools.changed',
        server,
        added,
        removed,
        toolCount: (other ?? record).tools.length,
        cause: options.cause,
        deferred: (other ?? record).deferred,
      });
    }
  }

  /** The one place a server's status changes: logged and emitted once per transition. */
  private setStatus(record: ServerRecord, next: ServerStatus, error?: string): void {
    const previous = record.status;
    if (error !== undefined) record.lastError = error;
    if (previous === next && error === undefined) return;
    record.status = next;
    const log = this.log.child({ server: record.name });
    if (next === 'failed') log.warn({ from: previous, err: error }, 'server failed');
    else log.debug({ from: previous, to: next }, 'status');
    this.emit({
      type: 'server.status',
      server: record.name,
      status: next,
      previous,
      ...(error !== undefined ? { error } : {}),
      toolCount: record.tools.length,
    });
  }

  private emit(event: ManagerEvent): void {
    this.emitter.emit('event', event);
  }

  /** Emits an operation event (reload.*, config.changed, server.log) on the same ordered stream. */
  emitOperation(event: OperationEvent): void {
    this.emit(event);
  }
}
