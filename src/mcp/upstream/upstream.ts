import type { ServerCapabilities } from '@modelcontextprotocol/client';
import type { ServerConfig, ServerSource } from '../../config/types.js';
import { errorMessage, isSwitchboardError, SwitchboardError, toErrorInfo, type ErrorInfo } from '../../errors.js';
import { backoffDelay, FailureWindow } from '../../util/backoff.js';
import type { ClockTimer } from '../../util/clock.js';
import { Coalescer } from '../../util/coalescer.js';
import type { ServerStatus, ToolsChangedCause } from '../events.js';
import { agentOptionsOf, type CallerChannel } from '../forwarding/caller.js';
import { LogMessageRing, type LoggedMessage } from '../forwarding/log-message.js';
import { resolveCallTimeout, type ServerConnection } from '../transport/client.js';
import type { ExitStatus } from '../transport/stdio-transport.js';
import { connectAndList, type Connected } from './connect-and-list.js';
import { classifyFailure, meansConnectionLost, type FailureKind } from './failure.js';
import { Pinger } from './pinger.js';
import { ReadyGate } from './ready-gate.js';
import { RetiredConnection } from './retired-connection.js';
import type { ConnectTask, HealthSettings, UpstreamHost, UpstreamIdentity } from './upstream-host.js';
import { requestThroughUpstream, type RequestPort, type UpstreamMethod, type UpstreamRequestOptions } from './upstream-request.js';
import { routeServerTraffic } from './upstream-traffic.js';

export type { ConnectTask, HealthSettings, UpstreamHost } from './upstream-host.js';

/**
 * One upstream MCP server: its status union and everything that drives it — the connection,
 * the attempt in flight, pings, the reconnect schedule, the crash window, waiting callers — and
 * the one way an agent's request reaches it (`request`). Its state is private: it changes only
 * through these methods, and the status only in `#setStatus`. Its lists live with the catalogues.
 * Async completions carry the generation they started in and are dropped when it moved on (a
 * teardown or a newer attempt), so no stale result lands.
 */
export class Upstream implements UpstreamIdentity {
  readonly name: string;
  readonly config: ServerConfig;
  readonly configHash: string;
  readonly source: ServerSource;

  #status: ServerStatus = 'disconnected';
  #lastError: ErrorInfo | undefined;
  #connection: ServerConnection | undefined;
  #connectedSince: number | undefined;
  #capabilities: ServerCapabilities | undefined;
  /** Agent requests in progress on this server: where its requests and log messages go. */
  readonly #callers = new Set<CallerChannel>();
  readonly #logMessages = new LogMessageRing();
  #restarts = 0;
  /** The reconnect attempt scheduled or running; 0 when none. */
  #attempt = 0;
  #nextRetryAt: number | undefined;
  #lastExit: ExitStatus | undefined;

  readonly #host: UpstreamHost;
  readonly #health: HealthSettings;
  readonly #crashes: FailureWindow;
  readonly #port: RequestPort;
  #generation = 0;
  #abort: AbortController | undefined;
  #inFlightAttempt: Promise<unknown> | undefined;
  readonly #ready = new ReadyGate<ServerConnection>();
  #retryTimer: ClockTimer | undefined;
  #pinger: Pinger | undefined;
  /** The connection the re-lists are for; a re-list queued for an older one is dropped. */
  #relistFor: ServerConnection | undefined;
  readonly #relists = new Coalescer(
    async () => {
      if (this.#relistFor) await this.#relistOnce(this.#relistFor);
    },
    () => this.#connection === this.#relistFor,
  );
  #detach: Array<() => void> = [];
  readonly #retired = new RetiredConnection();
  #stderrTail: () => string[] = () => [];

  /**
   * `previous` is the server's last upstream (a reload of a config that failed or was
   * disconnected): its status and error carry over until this one changes them.
   */
  constructor(init: UpstreamIdentity & { previous?: Upstream }, host: UpstreamHost, health: HealthSettings) {
    this.name = init.name;
    this.config = init.config;
    this.configHash = init.configHash;
    this.source = init.source;
    if (init.previous) {
      this.#status = init.previous.status;
      this.#lastError = init.previous.lastError;
    }
    this.#host = host;
    this.#health = health;
    this.#crashes = new FailureWindow(health.crashLimit, health.crashWindowMs);
    this.#port = {
      name: this.name,
      clock: host.clock,
      defaultTimeoutMs: resolveCallTimeout(this.config),
      waitForConnection: (signal, budgetMs) => this.waitForConnection(signal, budgetMs),
      reportFailure: (connection, err) => this.reportFailure(connection, err),
      addCaller: (caller, agentOf) => {
        this.#callers.add(caller);
        return agentOf(caller);
      },
      removeCaller: (caller) => this.#callers.delete(caller),
    };
  }

  // --- read-only state ----------------------------------------------------------------------

  get status(): ServerStatus {
    return this.#status;
  }
  /** The last failure, with its stable code; cleared by a successful connect. */
  get lastError(): ErrorInfo | undefined {
    return this.#lastError;
  }
  get connection(): ServerConnection | undefined {
    return this.#connection;
  }
  get connectedSince(): number | undefined {
    return this.#connectedSince;
  }
  /** What the server declared when it last connected (kept while it reconnects). */
  get capabilities(): ServerCapabilities | undefined {
    return this.#capabilities;
  }
  /** Successful reconnects since this config was loaded. */
  get restarts(): number {
    return this.#restarts;
  }
  get attempt(): number {
    return this.#attempt;
  }
  get nextRetryAt(): number | undefined {
    return this.#nextRetryAt;
  }
  get lastExit(): ExitStatus | undefined {
    return this.#lastExit;
  }
  /** Whether a connect or reconnect is under way or scheduled. */
  get pending(): boolean {
    return this.#status === 'connecting' || this.#status === 'reconnecting';
  }
  /** The last log messages the server sent (`GET /servers/:name`), oldest first. */
  logMessages(): LoggedMessage[] {
    return this.#logMessages.list();
  }
  /** The stderr lines of the current (or last) stdio child. */
  stderrLines(): string[] {
    return this.#connection ? this.#connection.stderr.lines() : this.#stderrTail();
  }

  // --- connecting ---------------------------------------------------------------------------

  /** The first connect of this config (or the one after a sign-in, with cause `reconnect`). */
  start(cause: ToolsChangedCause, phase: { returned: boolean; afterSignIn?: boolean }): ConnectTask {
    const generation = ++this.#generation;
    this.#lastError = undefined;
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
        this.#failWith(error, late());
      },
    );
    return task;
  }

  /**
   * A person signed in: connect again at once — only a server that was waiting for it (or whose
   * sign-in failed). Undefined when there was nothing to resume.
   */
  resumeAfterSignIn(): ConnectTask | undefined {
    const waiting = this.#status === 'needs_auth' || (this.#status === 'failed' && this.#lastError?.code === 'UPSTREAM_AUTH_FAILED');
    return waiting ? this.start('reconnect', { returned: true, afterSignIn: true }) : undefined;
  }

  /**
   * The live connection, waiting for a connect or reconnect in flight for at most `budgetMs`
   * (the caller's own deadline, on the host's clock). Never waits on a server that is not coming back.
   */
  async waitForConnection(signal: AbortSignal | undefined, budgetMs: number): Promise<ServerConnection> {
    if (this.#status === 'connected' && this.#connection) return this.#connection;
    if (!this.pending || !this.#ready.isOpen) throw this.#notConnectedError();
    return this.#ready.wait(signal, budgetMs, this.#host.clock, () => {
      const doing = this.#status === 'connecting' ? 'connect' : 'reconnect';
      const last = this.#lastError ? ` (last error: ${this.#lastError.message})` : '';
      return new SwitchboardError('TOOL_CALL_TIMEOUT', `Timed out after ${budgetMs} ms waiting for MCP server "${this.name}" to ${doing}${last}`);
    });
  }

  /**
   * The one way an agent's request reaches this server (see upstream-request.ts): waits for the
   * connection within the deadline, registers the caller, reports failures to the state machine
   * and retries as `options.replaySafe` allows.
   */
  request(method: UpstreamMethod, params: Record<string, unknown>, options: UpstreamRequestOptions): Promise<Record<string, unknown>> {
    return requestThroughUpstream(this.#port, method, params, options, agentOptionsOf);
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
    if (this.#connection !== connection) return;
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
    this.#attempt = 0;
    this.#nextRetryAt = undefined;
    const connection = this.#connection;
    this.#detachConnection();
    this.#ready.reject({ code: 'SERVER_CLOSED', message: `Server "${this.name}" was disconnected` });
    await Promise.allSettled([connection?.close(), this.#closeRetired(), this.#inFlightAttempt]);
  }

  markDisconnected(): void {
    this.#setStatus('disconnected');
  }

  /** A config that cannot be tried at all (validation problems): failed without connecting. */
  fail(error: ErrorInfo): void {
    this.#setStatus('failed', error);
  }

  /** Connect + list under a fresh abort; undefined when a teardown or newer attempt overtook it. */
  async #connectOnce(generation: number): Promise<Connected | undefined> {
    const abort = new AbortController();
    this.#abort = abort;
    const attempt = connectAndList(this.#host, this, abort.signal);
    this.#inFlightAttempt = attempt.catch(() => undefined);
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

  #onConnected({ connection, listing, others, changedSinceList }: Connected, cause: ToolsChangedCause, how = { restart: true }): void {
    const relistNow = changedSinceList();
    this.#connection = connection;
    this.#capabilities = connection.capabilities;
    this.#connectedSince = this.#host.clock.now();
    this.#stderrTail = () => connection.stderr.lines();
    this.#detach.push(
      connection.onClose((reason) => this.#lost(connection, toErrorInfo(reason, 'SERVER_CLOSED'), { crash: true, immediate: false })),
      connection.onToolsListChanged(() => this.requestRelist(connection)),
      // A transport error (say, the HTTP event stream broke) may mean the server is gone: ask now
      // rather than at the next scheduled ping.
      connection.onTransportError(() => this.#pinger?.now()),
      ...routeServerTraffic(
        { identity: this, isCurrent: () => this.#connection === connection, callers: () => [...this.#callers], logged: (params) => this.#logMessages.push(params) },
        connection,
        this.#host,
      ),
    );
    // A connect after a sign-in is no recovery from a failure: it does not count as a restart.
    if (cause === 'reconnect' && how.restart) this.#restarts += 1;
    this.#attempt = 0;
    this.#nextRetryAt = undefined;
    this.#lastError = undefined;
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
      if (this.#connection === connection) this.#host.listed(this, listing, 'list_changed');
    } catch (err) {
      if (this.#connection !== connection) return;
      if (isSwitchboardError(err, 'LOOP_DETECTED')) {
        // The upstream now leads back here: drop the link and its tools until an operator reloads.
        this.#detachConnection();
        await connection.close();
        this.#failWith(toErrorInfo(err), 'list_changed');
        return;
      }
      if (meansConnectionLost(this.reportFailure(connection, err))) return;
      this.#host.log.warn({ server: this.name, err: errorMessage(err) }, 'tools/list after list_changed failed');
    }
  }

  // --- losing the connection and coming back ----------------------------------------------

  /** The connection is gone (closed, frozen, forgotten): reconnect, or suspend a crash loop. */
  #lost(connection: ServerConnection, error: ErrorInfo, how: { crash: boolean; immediate: boolean }): void {
    if (this.#connection !== connection) return;
    this.#detachConnection();
    this.#lastExit = connection.exitStatus ?? this.#lastExit;
    this.#retired.retire(connection);
    this.#host.markStale(this);
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
    this.#attempt += 1;
    const delay = delayMs ?? backoffDelay(this.#attempt, this.#health.backoff, this.#host.random);
    this.#nextRetryAt = this.#host.clock.now() + delay;
    this.#ready.open();
    this.#setStatus('reconnecting', error);
    this.#retryTimer = this.#host.clock.setTimeout(() => void this.#reconnect(), delay);
  }

  async #reconnect(): Promise<void> {
    this.#retryTimer = undefined;
    this.#nextRetryAt = undefined;
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
        this.#failWith(error, 'reconnect');
        return;
      }
      if (error.code === 'UPSTREAM_AUTH_REQUIRED') {
        // Only a person can fix this; retrying on a schedule would only pile up sign-ins.
        this.#needsAuth(error, 'reconnect');
        return;
      }
      this.#host.log.debug({ server: this.name, attempt: this.#attempt, err: error.message }, 'reconnect attempt failed');
      this.#scheduleReconnect(error);
    }
  }

  /**
   * The server refused our credentials mid-life (a refresh token that was rejected, a revoked
   * grant, more scope wanted): drop the connection and wait for a sign-in.
   */
  #signInLost(connection: ServerConnection, error: ErrorInfo): void {
    if (this.#connection !== connection) return;
    this.#detachConnection();
    this.#lastExit = connection.exitStatus ?? this.#lastExit;
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
    this.#attempt = 0;
    this.#nextRetryAt = undefined;
    this.#host.holdForSignIn(this, cause);
    this.#ready.reject(error);
    this.#setStatus('needs_auth', error);
  }

  /** Failed for good (until an operator acts): its tools go, waiting callers learn why. */
  #failWith(error: ErrorInfo, cause: ToolsChangedCause): void {
    this.#host.dropTools(this, cause);
    this.#ready.reject(error);
    this.#setStatus('failed', error);
  }

  async #closeRetired(): Promise<void> {
    this.#lastExit = (await this.#retired.close()) ?? this.#lastExit;
  }

  // --- pings --------------------------------------------------------------------------------

  #startPings(connection: ServerConnection): void {
    if (!this.#health.enabled) return;
    const settings = { intervalMs: this.#health.pingIntervalMs, timeoutMs: this.#health.pingTimeoutMs };
    this.#pinger = new Pinger(connection, settings, this.#host.clock, (err) => this.#pingFailed(connection, err));
    this.#pinger.start();
  }

  #pingFailed(connection: ServerConnection, err: unknown): void {
    if (this.#connection !== connection) return;
    if (isSwitchboardError(err, 'UPSTREAM_PING_TIMEOUT')) {
      this.#lost(connection, toErrorInfo(err), { crash: true, immediate: false });
      return;
    }
    // Anything but a lost connection (an error answer, say) still proves the server is alive —
    // unless the failure took the connection out of service (a sign-in is needed).
    if (!meansConnectionLost(this.reportFailure(connection, err)) && this.#connection === connection) this.#startPings(connection);
  }

  // --- bookkeeping --------------------------------------------------------------------------

  #detachConnection(): void {
    for (const off of this.#detach.splice(0)) off();
    this.#pinger?.stop();
    this.#pinger = undefined;
    this.#connection = undefined;
    this.#connectedSince = undefined;
  }

  #cancelTimers(): void {
    this.#host.clock.clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    this.#pinger?.stop();
  }

  #notConnectedError(): SwitchboardError {
    if (this.#lastError?.code === 'SERVER_SUSPENDED') return new SwitchboardError('SERVER_SUSPENDED', this.#lastError.message);
    if (this.#status === 'needs_auth' && this.#lastError) return new SwitchboardError('UPSTREAM_AUTH_REQUIRED', this.#lastError.message);
    const why = this.#lastError ? `: ${this.#lastError.message}` : '';
    return new SwitchboardError('SERVER_NOT_CONNECTED', `Server "${this.name}" is ${this.#status}${why}`);
  }

  /** The one place the status changes; the host logs and emits each transition once. */
  #setStatus(next: ServerStatus, error?: ErrorInfo): void {
    const previous = this.#status;
    if (error !== undefined) this.#lastError = error;
    // A repeated `reconnecting` is still news: it carries the next attempt and its time.
    if (previous === next && error === undefined && next !== 'reconnecting') return;
    this.#status = next;
    this.#host.statusChanged({
      server: this.name,
      status: next,
      previous,
      error: this.#lastError,
      attempt: this.#attempt,
      nextRetryAt: this.#nextRetryAt,
      restarts: this.#restarts,
    });
  }
}
