import { errorMessage, isSwitchboardError, SwitchboardError, toErrorInfo, type ErrorInfo } from '../../errors.js';
import { Coalescer } from '../../util/coalescer.js';
import type { ToolsChangedCause } from '../../events/daemon-events.js';
import { attemptOutputOf, type ServerConnection } from '../transport/client.js';
import { BackPressure } from './back-pressure.js';
import { connectAndList, type Connected } from './connect-and-list.js';
import { meansConnectionLost, type FailureKind } from './failure.js';
import { Pinger } from './pinger.js';
import { ReadyGate } from './ready-gate.js';
import { RetiredConnection } from './retired-connection.js';
import type { ConnectTask, HealthSettings, UpstreamHost, UpstreamIdentity } from './upstream-host.js';
import { UpstreamState } from './upstream-state.js';
import { routeServerTraffic } from './upstream-traffic.js';

/**
 * The connecting half of an upstream: attempts (each with a generation; a result of an attempt
 * that was overtaken is dropped), the connection while it is attached — its listeners, pings and
 * re-lists — and where callers wait for it. What a failure leads to is the supervision's business
 * (upstream.ts), through the abstract hooks below. Attempts, pings and re-lists all wait out a
 * pause the server asked for (`throttle`, issue #35 item 3) before they send anything.
 */
export abstract class UpstreamLink extends UpstreamState {
  protected readonly health: HealthSettings;
  /** The pause the server asked for (429/503 with `Retry-After`), kept by every connection to it. */
  readonly throttle: BackPressure;
  protected generation = 0;
  protected readonly ready = new ReadyGate<ServerConnection>();
  protected readonly retired = new RetiredConnection();
  #abort: AbortController | undefined;
  #inFlightAttempt: Promise<unknown> | undefined;
  #pinger: Pinger | undefined;
  /** The connection the re-lists are for; a re-list queued for an older one is dropped. */
  #relistFor: ServerConnection | undefined;
  readonly #relists = new Coalescer(
    async () => {
      if (this.#relistFor) await this.#relistOnce(this.#relistFor);
    },
    () => this.run.connection === this.#relistFor,
  );
  #detach: Array<() => void> = [];

  protected constructor(init: UpstreamIdentity & { previous?: UpstreamState }, host: UpstreamHost, health: HealthSettings) {
    super(init, host);
    this.health = health;
    this.throttle = new BackPressure(host.clock);
  }

  /** A request on `connection` failed: what it means for the server (upstream.ts). */
  abstract reportFailure(connection: ServerConnection, err: unknown): FailureKind;
  /** The connection went away (closed, frozen, forgotten). */
  protected abstract lost(connection: ServerConnection, error: ErrorInfo, how: { crash: boolean; immediate: boolean }): void;
  /** A ping failed. */
  protected abstract pingFailed(connection: ServerConnection, err: unknown): void;
  /** The first attempt of a config failed. */
  protected abstract connectFailed(error: ErrorInfo, cause: ToolsChangedCause): void;
  /** Failed for good (until an operator acts). */
  protected abstract failWith(error: ErrorInfo, cause: ToolsChangedCause): void;

  /** The first connect of this config (or the one after a sign-in, with cause `reconnect`). */
  start(cause: ToolsChangedCause, phase: { returned: boolean; afterSignIn?: boolean }): ConnectTask {
    const generation = ++this.generation;
    this.run.lastError = undefined;
    this.ready.open();
    this.setStatus('connecting');
    const task: ConnectTask = { upstream: this, done: Promise.resolve() };
    // Read when the attempt ends: `phase.returned` turns true once the startup gate has passed.
    const late = (): ToolsChangedCause => (phase.returned && cause !== 'reconnect' ? 'background' : cause);
    task.done = this.connectOnce(generation).then(
      (connected) => {
        if (!connected) return;
        this.onConnected(connected, late(), { restart: !phase.afterSignIn });
        task.outcome = { ok: true };
      },
      (err: unknown) => {
        if (generation !== this.generation) return;
        const error = toErrorInfo(err, 'UPSTREAM_CONNECT_FAILED');
        task.outcome = { ok: false, error };
        this.connectFailed(error, late());
      },
    );
    return task;
  }

  /**
   * A person signed in: connect again at once — only a server that was waiting for it (or whose
   * sign-in failed). Undefined when there was nothing to resume.
   */
  resumeAfterSignIn(): ConnectTask | undefined {
    const waiting = this.run.status === 'needs_auth' || (this.run.status === 'failed' && this.run.lastError?.code === 'UPSTREAM_AUTH_FAILED');
    return waiting ? this.start('reconnect', { returned: true, afterSignIn: true }) : undefined;
  }

  /**
   * The live connection, waiting for a connect or reconnect in flight for at most `budgetMs`
   * (the caller's own deadline, on the host's clock). Never waits on a server that is not coming back.
   */
  async waitForConnection(signal: AbortSignal | undefined, budgetMs: number): Promise<ServerConnection> {
    if (this.run.status === 'connected' && this.run.connection) return this.run.connection;
    if (!this.pending || !this.ready.isOpen) throw this.notConnectedError();
    return this.ready.wait(signal, budgetMs, this.host.clock, () => {
      const doing = this.run.status === 'connecting' ? 'connect' : 'reconnect';
      const last = this.run.lastError ? ` (last error: ${this.run.lastError.message})` : '';
      return new SwitchboardError('TOOL_CALL_TIMEOUT', `Timed out after ${budgetMs} ms waiting for MCP server "${this.name}" to ${doing}${last}`);
    });
  }

  /** `notifications/tools/list_changed`: at most one re-list in flight and one queued. */
  requestRelist(connection: ServerConnection): void {
    if (this.run.connection !== connection) return;
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
    this.generation += 1;
    this.#abort?.abort(new SwitchboardError('SERVER_CLOSED', `Server "${this.name}" was disconnected`));
    this.#abort = undefined;
    this.#pinger?.stop();
    const connection = this.run.connection;
    this.detachConnection();
    this.ready.reject({ code: 'SERVER_CLOSED', message: `Server "${this.name}" was disconnected` });
    await Promise.allSettled([connection?.close(), this.closeRetired(), this.#inFlightAttempt]);
  }

  markDisconnected(): void {
    this.setStatus('disconnected');
  }

  /** A config that cannot be tried at all (validation problems): failed without connecting. */
  fail(error: ErrorInfo): void {
    this.setStatus('failed', error);
  }

  /** Connect + list under a fresh abort; undefined when a teardown or newer attempt overtook it. */
  protected async connectOnce(generation: number): Promise<Connected | undefined> {
    const abort = new AbortController();
    this.#abort = abort;
    // A reconnect (or a connect after a reload) due in a pause waits for its end; one refused for
    // a pause is tried again after it rather than failing the server.
    const attempt = this.throttle.after(() => connectAndList(this.host, this, abort.signal), abort.signal);
    this.#inFlightAttempt = attempt.catch(() => undefined);
    try {
      const connected = await attempt;
      if (generation !== this.generation) {
        void connected.connection.close();
        return undefined;
      }
      return connected;
    } catch (err) {
      // What the server said before it failed stays readable (`logs`, `stderrTail`) until the next attempt.
      const output = attemptOutputOf(err);
      if (output && generation === this.generation) this.run.stderrTail = () => [...output];
      throw err;
    } finally {
      if (this.#abort === abort) this.#abort = undefined;
    }
  }

  protected onConnected({ connection, listing, others, changedSinceList }: Connected, cause: ToolsChangedCause, how = { restart: true }): void {
    const relistNow = changedSinceList();
    this.run.connection = connection;
    this.run.capabilities = connection.capabilities;
    this.run.era = connection.era;
    this.run.connectedSince = this.host.clock.now();
    this.run.stderrTail = () => connection.stderr.lines();
    this.#detach.push(
      connection.onClose((reason) => this.lost(connection, toErrorInfo(reason, 'SERVER_CLOSED'), { crash: true, immediate: false })),
      connection.onToolsListChanged(() => this.requestRelist(connection)),
      // A transport error (say, the HTTP event stream broke) may mean the server is gone: ask now
      // rather than at the next scheduled ping.
      connection.onTransportError(() => this.#pinger?.now()),
      ...routeServerTraffic(
        {
          identity: this,
          isCurrent: () => this.run.connection === connection,
          callers: () => [...this.callers],
          logged: (params) => this.logRing.push(params),
          pause: this.throttle,
        },
        connection,
        this.host,
      ),
    );
    // A connect after a sign-in is no recovery from a failure: it does not count as a restart.
    if (cause === 'reconnect' && how.restart) this.run.restarts += 1;
    this.run.lastError = undefined;
    this.setStatus('connected');
    this.host.listed(this, listing, cause);
    this.host.setOthers(this, others, cause);
    this.ready.resolve(connection);
    this.startPings(connection);
    if (relistNow) this.requestRelist(connection);
  }

  async #relistOnce(connection: ServerConnection): Promise<void> {
    try {
      const listing = await this.throttle.after(() => this.host.list(this, connection));
      if (this.run.connection === connection) this.host.listed(this, listing, 'list_changed');
    } catch (err) {
      if (this.run.connection !== connection) return;
      if (isSwitchboardError(err, 'LOOP_DETECTED')) {
        // The upstream now leads back here: drop the link and its tools until an operator reloads.
        this.detachConnection();
        await connection.close();
        this.failWith(toErrorInfo(err), 'list_changed');
        return;
      }
      if (meansConnectionLost(this.reportFailure(connection, err))) return;
      this.host.log.warn({ server: this.name, err: errorMessage(err) }, 'tools/list after list_changed failed');
    }
  }

  protected async closeRetired(): Promise<void> {
    this.run.lastExit = (await this.retired.close()) ?? this.run.lastExit;
  }

  // --- pings and bookkeeping ----------------------------------------------------------

  protected startPings(connection: ServerConnection): void {
    if (!this.health.enabled) return;
    const settings = { intervalMs: this.health.pingIntervalMs, timeoutMs: this.health.pingTimeoutMs };
    this.#pinger = new Pinger(connection, settings, { clock: this.host.clock, pause: this.throttle }, (err) => this.pingFailed(connection, err));
    this.#pinger.start();
  }

  protected detachConnection(): void {
    for (const off of this.#detach.splice(0)) off();
    this.#pinger?.stop();
    this.#pinger = undefined;
    this.run.connection = undefined;
    this.run.connectedSince = undefined;
  }
}
