import type { Prompt, Resource, ResourceTemplateType as ResourceTemplate, ServerCapabilities, Tool } from '@modelcontextprotocol/client';
import type { ServerConfig, ServerSource } from '../../config/types.js';
import { errorMessage, isSwitchboardError, SwitchboardError, toErrorInfo, type ErrorInfo } from '../../errors.js';
import { backoffDelay, FailureWindow } from '../../util/backoff.js';
import type { ClockTimer } from '../../util/clock.js';
import { Coalescer } from '../../util/coalescer.js';
import type { ServerConnection } from '../transport/client.js';
import type { ServerStatus, ToolsChangedCause } from '../events.js';
import type { ConnectTask, HealthSettings, UpstreamHost } from './upstream-host.js';
import { classifyFailure, meansConnectionLost, type FailureKind } from './failure.js';
import type { InstanceAd } from './instance.js';
import type { ToolListing } from '../transport/list-tools.js';
import { isEraMismatch } from '../transport/protocol-era.js';
import { Pinger } from './pinger.js';
import { ReadyGate } from './ready-gate.js';
import type { CallerChannel } from '../forwarding/caller.js';
import { LogMessageRing } from '../forwarding/log-message.js';
import type { OtherLists } from '../transport/other-lists.js';
import { routeServerTraffic } from './upstream-traffic.js';
import type { ExitStatus } from '../transport/stdio-transport.js';
import type { ListHints } from '../../store/tool-cache-store.js';

export type { ConnectTask, HealthSettings, UpstreamHost } from './upstream-host.js';

/** The first request on a cached verdict was refused as the wrong era. */
class StaleVerdictError extends Error {
  constructor(cause: unknown) {
    super('the cached protocol verdict is stale', { cause });
  }
}

interface Connected {
  connection: ServerConnection;
  listing: ToolListing;
  others: Partial<OtherLists>;
  changedSinceList: () => boolean;
}

/**
 * One upstream MCP server: its status union and everything that drives it — the connection,
 * the attempt in flight, pings, the reconnect schedule, the crash window, waiting callers.
 * Status changes only in `setStatus`. Async completions carry the generation they started in
 * and are dropped when it moved on (a teardown or a newer attempt), so no stale result lands.
 */
export class Upstream {
  readonly name: string;
  readonly config: ServerConfig;
  readonly configHash: string;
  readonly source: ServerSource;

  status: ServerStatus = 'disconnected';
  lastError: ErrorInfo | undefined;
  connection: ServerConnection | undefined;
  connectedSince: number | undefined;
  /** Last known tools; written by the manager's `setTools` only. */
  tools: Tool[] = [];
  deferred = false;
  stale = false;
  /** The Switchboard instance tree this server advertised, when it is one. */
  instance: InstanceAd | undefined;
  /** Caching hints (modern era) of the last list. */
  hints: ListHints | undefined;
  /** Last known prompts, resources and templates; written by the manager's `setOthers` only. */
  prompts: Prompt[] = [];
  resources: Resource[] = [];
  resourceTemplates: ResourceTemplate[] = [];
  /** What the server declared when it last connected. */
  capabilities: ServerCapabilities | undefined;
  /** Agent calls in progress on this server: where its requests and log messages go. */
  readonly callers = new Set<CallerChannel>();
  /** The last log messages the server sent (`GET /servers/:name`). */
  readonly logMessages = new LogMessageRing();
  /** Successful reconnects since this config was loaded. */
  restarts = 0;
  /** The reconnect attempt scheduled or running; 0 when none. */
  attempt = 0;
  nextRetryAt: number | undefined;
  lastExit: ExitStatus | undefined;

  readonly #host: UpstreamHost;
  readonly #health: HealthSettings;
  readonly #crashes: FailureWindow;
  #generation = 0;
  #abort: AbortController | undefined;
  #attempt: Promise<unknown> | undefined;
  readonly #ready = new ReadyGate<ServerConnection>();
  #retryTimer: ClockTimer | undefined;
  #pinger: Pinger | undefined;
  /** The connection the re-lists are for; a re-list queued for an older one is dropped. */
  #relistFor: ServerConnection | undefined;
  readonly #relists = new Coalescer(
    async () => {
      if (this.#relistFor) await this.#relistOnce(this.#relistFor);
    },
    () => this.connection === this.#relistFor,
  );
  #detach: Array<() => void> = [];
  /** A lost connection not closed yet, and its close once started (see `#retire`). */
  #retired: ServerConnection | undefined;
  #retiring: Promise<void> | undefined;
  #stderrTail: () => string[] = () => [];

  /**
   * `previous` is the server's last upstream (a reload of a config that failed or was
   * disconnected): its status, error and last known tools carry over until this one changes them.
   */
  constructor(
    init: { name: string; config: ServerConfig; configHash: string; source: ServerSource; previous?: Upstream },
    host: UpstreamHost,
    health: HealthSettings,
  ) {
    this.name = init.name;
    this.config = init.config;
    this.configHash = init.configHash;
    this.source = init.source;
    if (init.previous) {
      this.status = init.previous.status;
      this.lastError = init.previous.lastError;
      this.tools = init.previous.tools;
      this.deferred = init.previous.deferred;
      this.stale = init.previous.stale;
    }
    this.#host = host;
    this.#health = health;
    this.#crashes = new FailureWindow(health.crashLimit, health.crashWindowMs);
  }

  /** The stderr lines of the current (or last) stdio child. */
  stderrLines(): string[] {
    return this.connection ? this.connection.stderr.lines() : this.#stderrTail();
  }

  /** Whether a connect or reconnect is under way or scheduled. */
  get pending(): boolean {
    return this.status === 'connecting' || this.status === 'reconnecting';
  }

  /** The first connect of this config (or the one after a sign-in, with cause `reconnect`). */
  start(cause: ToolsChangedCause, phase: { returned: boolean; afterSignIn?: boolean }): ConnectTask {
    const generation = ++this.#generation;
    this.lastError = undefined;
    this.#ready.open();
    this.#setStatus('connecting');
    const task: ConnectTask = { upstream: this, done: Promise.resolve() };
    // Read when the attempt ends: `phase.returned` turns true once the startup gate has passed.
    const late = (): ToolsChangedCause => (phase.returned && cause !== 'reconnect' ? 'background' : cause);
    task.done = this.#connectOnce(generation).then(
      (connected) => {
        if (!connected) return;
        this.#onConnected(connected, late(), { restart: !phase.afterSignIn });
        task.outcome = { ok: true };
      },
      (err: unknown) => {
        if (generation !== this.#generation) return;
        const error = toErrorInfo(err, 'UPSTREAM_CONNECT_FAILED');
        task.outcome = { ok: false, error };
        if (error.code === 'UPSTREAM_AUTH_REQUIRED') {
          this.#needsAuth(error, late());
          return;
        }
        this.#host.setTools(this, [], { cause: late(), deferred: false, stale: false });
        this.#ready.reject(error);
        this.#setStatus('failed', error);
      },
    );
    return task;
  }

  /**
   * A person signed in: connect again at once — only a server that was waiting for it (or whose
   * sign-in failed). Undefined when there was nothing to resume.
   */
  resumeAfterSignIn(): ConnectTask | undefined {
    const waiting = this.status === 'needs_auth' || (this.status === 'failed' && this.lastError?.code === 'UPSTREAM_AUTH_FAILED');
    return waiting ? this.start('reconnect', { returned: true, afterSignIn: true }) : undefined;
  }

  /**
   * The live connection, waiting for a connect or reconnect in flight for at most `budgetMs`
   * (the caller's own deadline). Never waits on a server that is not coming back.
   */
  async waitForConnection(signal: AbortSignal | undefined, budgetMs: number): Promise<ServerConnection> {
    if (this.status === 'connected' && this.connection) return this.connection;
    if (!this.pending || !this.#ready.isOpen) throw this.#notConnectedError();
    return this.#ready.wait(signal, budgetMs, () => {
      const doing = this.status === 'connecting' ? 'connect' : 'reconnect';
      const last = this.lastError ? ` (last error: ${this.lastError.message})` : '';
      return new SwitchboardError('TOOL_CALL_TIMEOUT', `Timed out after ${budgetMs} ms waiting for MCP server "${this.name}" to ${doing}${last}`);
    });
  }

  /**
   * A request on `connection` failed with `err`: when that means the connection is gone, the
   * server is marked lost and reconnected. Returns the failure's kind for the caller's retry
   * decision.
   */
  reportFailure(connection: ServerConnection, err: unknown): FailureKind {
    const kind = classifyFailure(err);
    if (kind === 'auth-required') {
      this.#signInLost(connection, toErrorInfo(err));
      return kind;
    }
    if (!meansConnectionLost(kind)) return kind;
    if (kind === 'session-expired') {
      const error: ErrorInfo = { code: 'UPSTREAM_SESSION_EXPIRED', message: `MCP server "${this.name}" no longer knows the session (HTTP 404); starting a new one` };
      this.#lost(connection, error, { crash: false, immediate: true });
    } else {
      this.#lost(connection, toErrorInfo(err, 'SERVER_CLOSED'), { crash: true, immediate: false });
    }
    return kind;
  }

  /** `notifications/tools/list_changed`: at most one re-list in flight and one queued. */
  requestRelist(connection: ServerConnection): void {
    if (this.connection !== connection) return;
    this.#relistFor = connection;
    this.#relists.request();
  }

  /** Resolves once no re-list is running or queued (the one in flight included). */
  relistSettled(): Promise<void> {
    return this.#relists.settled();
  }

  /** Aborts a connect attempt in flight (disconnect, shutdown) without waiting for it. */
  abortConnect(reason: Error): void {
    this.#abort?.abort(reason);
  }

  /**
   * Tears everything down: the attempt in flight, timers, the connection (a stdio process group
   * is gone when this resolves). Callers waiting for a connection get `SERVER_CLOSED`. The status
   * is left to `markDisconnected`, so the manager can drop the tools first.
   */
  async stop(): Promise<void> {
    this.#generation += 1;
    this.#abort?.abort(new SwitchboardError('SERVER_CLOSED', `Server "${this.name}" was disconnected`));
    this.#abort = undefined;
    this.#cancelTimers();
    this.attempt = 0;
    this.nextRetryAt = undefined;
    const connection = this.connection;
    this.#detachConnection();
    this.#ready.reject({ code: 'SERVER_CLOSED', message: `Server "${this.name}" was disconnected` });
    await Promise.allSettled([connection?.close(), this.#closeRetired(), this.#attempt]);
  }

  markDisconnected(): void {
    this.#setStatus('disconnected');
  }

  /** A config that cannot be tried at all (validation problems): failed without connecting. */
  fail(error: ErrorInfo): void {
    this.#setStatus('failed', error);
  }

  // --- connecting -------------------------------------------------------------------------

  /** Connect + list under a fresh abort; undefined when a teardown or newer attempt overtook it. */
  async #connectOnce(generation: number): Promise<Connected | undefined> {
    const abort = new AbortController();
    this.#abort = abort;
    const attempt = this.#connectAndList(abort.signal);
    this.#attempt = attempt.catch(() => undefined);
    try {
      const connected = await attempt;
      if (generation !== this.#generation) {
        void connected.connection.close();
        return undefined;
      }
      return connected;
    } finally {
      if (this.#abort === abort) this.#abort = undefined;
    }
  }

  async #connectAndList(signal: AbortSignal): Promise<Connected> {
    try {
      return await this.#connectAndListOnce(signal, false);
    } catch (err) {
      if (!(err instanceof StaleVerdictError)) throw err;
      // A cached modern verdict the server no longer honours: forget it and negotiate afresh, once.
      this.#host.log.info({ server: this.name, err: errorMessage(err.cause) }, 'cached protocol verdict is stale; negotiating again');
      this.#host.dropVerdict(this);
      return this.#connectAndListOnce(signal, true);
    }
  }

  async #connectAndListOnce(signal: AbortSignal, ignoreCachedVerdict: boolean): Promise<Connected> {
    const started = this.#host.clock.now();
    const connection = await this.#host.connect(this, signal, { ignoreCachedVerdict });
    // A list_changed may arrive with (or just after) the first list, before the connection is
    // attached; remember it so the list is fetched again instead of lost.
    let changed = false;
    const stopWatching = connection.onToolsListChanged(() => (changed = true));
    try {
      const [listing, others] = await Promise.all([this.#host.list(this, connection, signal), this.#host.listOthers(this, connection, signal)]);
      this.#host.log.info({ server: this.name, tools: listing.tools.length, ms: this.#host.clock.now() - started }, 'connected');
      return {
        connection,
        listing,
        others,
        changedSinceList: () => {
          stopWatching();
          return changed;
        },
      };
    } catch (err) {
      stopWatching();
      await connection.close();
      if (connection.verdictFromCache && isEraMismatch(err, connection.era)) throw new StaleVerdictError(err);
      throw err;
    }
  }

  #onConnected({ connection, listing, others, changedSinceList }: Connected, cause: ToolsChangedCause, how = { restart: true }): void {
    const relistNow = changedSinceList();
    this.connection = connection;
    this.capabilities = connection.capabilities;
    this.connectedSince = this.#host.clock.now();
    this.#stderrTail = () => connection.stderr.lines();
    this.#detach.push(
      connection.onClose((reason) => this.#lost(connection, toErrorInfo(reason, 'SERVER_CLOSED'), { crash: true, immediate: false })),
      connection.onToolsListChanged(() => this.requestRelist(connection)),
      // A transport error (say, the HTTP event stream broke) may mean the server is gone: ask now
      // rather than at the next scheduled ping.
      connection.onTransportError(() => this.#pinger?.now()),
      ...routeServerTraffic(this, connection, this.#host),
    );
    // A connect after a sign-in is no recovery from a failure: it does not count as a restart.
    if (cause === 'reconnect' && how.restart) this.restarts += 1;
    this.attempt = 0;
    this.nextRetryAt = undefined;
    this.lastError = undefined;
    this.#setStatus('connected');
    this.#host.listed(this, listing, cause);
    this.#host.setOthers(this, others, cause);
    this.#ready.resolve(connection);
    this.#startPings(connection);
    if (relistNow) this.requestRelist(connection);
  }

  async #relistOnce(connection: ServerConnection): Promise<void> {
    try {
      const listing = await this.#host.list(this, connection);
      if (this.connection === connection) this.#host.listed(this, listing, 'list_changed');
    } catch (err) {
      if (this.connection !== connection) return;
      if (isSwitchboardError(err, 'LOOP_DETECTED')) {
        // The upstream now leads back here: drop the link and its tools until an operator reloads.
        await this.#failPermanently(connection, toErrorInfo(err));
        return;
      }
      if (meansConnectionLost(this.reportFailure(connection, err))) return;
      this.#host.log.warn({ server: this.name, err: errorMessage(err) }, 'tools/list after list_changed failed');
    }
  }

  // --- losing the connection and coming back ----------------------------------------------

  /** The connection is gone (closed, frozen, forgotten): reconnect, or suspend a crash loop. */
  #lost(connection: ServerConnection, error: ErrorInfo, how: { crash: boolean; immediate: boolean }): void {
    if (this.connection !== connection) return;
    this.#detachConnection();
    this.lastExit = connection.exitStatus ?? this.lastExit;
    this.#retire(connection);
    this.#host.setTools(this, this.tools, { cause: 'reconnect', deferred: false, stale: this.tools.length > 0 });
    if (!this.#health.enabled) {
      this.#setStatus('disconnected', error);
      return;
    }
    if (how.crash && this.#crashes.record(this.#host.clock.now())) {
      const message =
        `MCP server "${this.name}" crashed too many times (${this.#crashes.count} times within ` +
        `${Math.round(this.#health.crashWindowMs / 1000)} s) and is suspended until it is reloaded. Last failure: ${error.message}`;
      this.#ready.reject({ code: 'SERVER_SUSPENDED', message });
      this.#setStatus('failed', { code: 'SERVER_SUSPENDED', message });
      return;
    }
    this.#scheduleReconnect(error, how.immediate ? 0 : undefined);
  }

  #scheduleReconnect(error: ErrorInfo, delayMs?: number): void {
    this.attempt += 1;
    const delay = delayMs ?? backoffDelay(this.attempt, this.#health.backoff, this.#host.random);
    this.nextRetryAt = this.#host.clock.now() + delay;
    this.#ready.open();
    this.#setStatus('reconnecting', error);
    this.#retryTimer = this.#host.clock.setTimeout(() => void this.#reconnect(), delay);
  }

  async #reconnect(): Promise<void> {
    this.#retryTimer = undefined;
    this.nextRetryAt = undefined;
    const generation = ++this.#generation;
    // Never two of the same server at once (a lock file, a port): the old one goes first.
    await this.#closeRetired();
    if (generation !== this.#generation) return;
    try {
      const connected = await this.#connectOnce(generation);
      if (connected) this.#onConnected(connected, 'reconnect');
    } catch (err) {
      if (generation !== this.#generation) return;
      const error = toErrorInfo(err, 'UPSTREAM_CONNECT_FAILED');
      if (error.code === 'LOOP_DETECTED') {
        this.#host.setTools(this, [], { cause: 'reconnect', deferred: false, stale: false });
        this.#ready.reject(error);
        this.#setStatus('failed', error);
        return;
      }
      if (error.code === 'UPSTREAM_AUTH_REQUIRED') {
        // Only a person can fix this; retrying on a schedule would only pile up sign-ins.
        this.#needsAuth(error, 'reconnect');
        return;
      }
      this.#host.log.debug({ server: this.name, attempt: this.attempt, err: error.message }, 'reconnect attempt failed');
      this.#scheduleReconnect(error);
    }
  }

  /**
   * The server refused our credentials mid-life (a refresh token that was rejected, a revoked
   * grant, more scope wanted): drop the connection and wait for a sign-in.
   */
  #signInLost(connection: ServerConnection, error: ErrorInfo): void {
    if (this.connection !== connection) return;
    this.#detachConnection();
    this.lastExit = connection.exitStatus ?? this.lastExit;
    void connection.close();
    this.#needsAuth(error, 'reconnect');
  }

  /**
   * Waiting for a person (`needs_auth`): no reconnects on a schedule, calls answered at once
   * with `UPSTREAM_AUTH_REQUIRED`, and the last known (or cached) tools kept listed as deferred.
   */
  #needsAuth(error: ErrorInfo, cause: ToolsChangedCause): void {
    this.#host.clock.clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    this.attempt = 0;
    this.nextRetryAt = undefined;
    const tools = this.tools.length > 0 ? this.tools : (this.#host.cachedTools(this) ?? []);
    this.#host.setTools(this, tools, { cause, deferred: tools.length > 0, stale: false });
    this.#ready.reject(error);
    this.#setStatus('needs_auth', error);
  }

  async #failPermanently(connection: ServerConnection, error: ErrorInfo): Promise<void> {
    this.#detachConnection();
    await connection.close();
    this.#host.setTools(this, [], { cause: 'list_changed', deferred: false, stale: false });
    this.#ready.reject(error);
    this.#setStatus('failed', error);
  }

  /**
   * Takes a lost connection out of service. A stdio process is killed at once (it is dead or
   * frozen, and its group must not linger). An HTTP connection is closed only before the next
   * attempt: closing it now would fail its requests in flight as "closed", hiding their own
   * errors — a refused connection proves a request never arrived and may be retried safely.
   */
  #retire(connection: ServerConnection): void {
    this.#retired = connection;
    this.#retiring = connection.transport === 'stdio' ? connection.close() : undefined;
  }

  async #closeRetired(): Promise<void> {
    const retired = this.#retired;
    if (!retired) return;
    const closing = this.#retiring ?? retired.close();
    this.#retired = undefined;
    this.#retiring = undefined;
    await closing.catch(() => undefined);
    // A frozen child only ends when we kill it: its exit is known now, not when it was lost.
    this.lastExit = retired.exitStatus ?? this.lastExit;
  }

  // --- pings --------------------------------------------------------------------------------

  #startPings(connection: ServerConnection): void {
    if (!this.#health.enabled) return;
    const settings = { intervalMs: this.#health.pingIntervalMs, timeoutMs: this.#health.pingTimeoutMs };
    this.#pinger = new Pinger(connection, settings, this.#host.clock, (err) => this.#pingFailed(connection, err));
    this.#pinger.start();
  }

  #pingFailed(connection: ServerConnection, err: unknown): void {
    if (this.connection !== connection) return;
    if (isSwitchboardError(err, 'UPSTREAM_PING_TIMEOUT')) {
      this.#lost(connection, toErrorInfo(err), { crash: true, immediate: false });
      return;
    }
    // Anything but a lost connection (an error answer, say) still proves the server is alive —
    // unless the failure took the connection out of service (a sign-in is needed).
    if (!meansConnectionLost(this.reportFailure(connection, err)) && this.connection === connection) this.#startPings(connection);
  }

  // --- bookkeeping --------------------------------------------------------------------------

  #detachConnection(): void {
    for (const off of this.#detach.splice(0)) off();
    this.#pinger?.stop();
    this.#pinger = undefined;
    this.connection = undefined;
    this.connectedSince = undefined;
  }

  #cancelTimers(): void {
    this.#host.clock.clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    this.#pinger?.stop();
  }

  #notConnectedError(): SwitchboardError {
    if (this.lastError?.code === 'SERVER_SUSPENDED') return new SwitchboardError('SERVER_SUSPENDED', this.lastError.message);
    if (this.status === 'needs_auth' && this.lastError) return new SwitchboardError('UPSTREAM_AUTH_REQUIRED', this.lastError.message);
    const why = this.lastError ? `: ${this.lastError.message}` : '';
    return new SwitchboardError('SERVER_NOT_CONNECTED', `Server "${this.name}" is ${this.status}${why}`);
  }

  /** The one place the status changes; the host logs and emits each transition once. */
  #setStatus(next: ServerStatus, error?: ErrorInfo): void {
    const previous = this.status;
    if (error !== undefined) this.lastError = error;
    // A repeated `reconnecting` is still news: it carries the next attempt and its time.
    if (previous === next && error === undefined && next !== 'reconnecting') return;
    this.status = next;
    this.#host.statusChanged(this, previous);
  }
}
