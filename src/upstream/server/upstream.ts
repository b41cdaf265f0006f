import { isSwitchboardError, toErrorInfo, type ErrorInfo } from '../../errors.js';
import { isStepUpRefusal } from '../oauth/auth-errors.js';
import type { ToolsChangedCause } from '../../events/daemon-events.js';
import { agentOptionsOf } from '../transport/caller.js';
import { resolveCallTimeout, type ServerConnection } from '../transport/client.js';
import type { LimitMode } from './adaptive-limit.js';
import { CallGate, type QueueMode, type WaitHistogram } from './call-gate.js';
import { classifyFailure, meansConnectionLost, type FailureKind } from './failure.js';
import { EraCompanion, type CompanionState } from './era-companion.js';
import { ReconnectSchedule } from './reconnect-schedule.js';
import type { HealthSettings, UpstreamHost, UpstreamIdentity } from './upstream-host.js';
import { UpstreamLink } from './upstream-link.js';
import { requestThroughUpstream, type RequestPort, type UpstreamMethod, type UpstreamRequestOptions } from './upstream-request.js';

export type { ConnectTask, HealthSettings, UpstreamHost } from './upstream-host.js';

/** An upstream's concurrency limit and load, as every server snapshot carries it (issue #35). */
export interface ConcurrencyState {
  inFlight: number;
  queued: number;
  /** Requests that may run at once, now. */
  limit: number;
  /** `adaptive`: learned from the server's latency; `fixed`: pinned by `maxConcurrentCalls`. */
  mode: LimitMode;
  /** Why the limit is what it is: its last change, or its start. */
  reason: string;
}

/** An upstream's traffic as `GET /servers/:name` shows it (issues #26, #35). */
export interface TrafficState extends ConcurrencyState {
  /** When the limit last changed; null until it has. */
  limitChangedAt: string | null;
  /** Most requests that may wait: `queueSize` when pinned, else the hard bound. */
  queueBound: number;
  /** `deadline`: a request is refused only when its expected wait exceeds its deadline (or at the bound); `fixed`: `queueSize` pinned. */
  queueMode: QueueMode;
  /** The server's observed time to answer, from which a request's expected wait is reckoned; null before enough answers. */
  serviceMs: number | null;
  /** Until when the server asked for no requests (429/503 with `Retry-After`); null when it did not. */
  pausedUntil: string | null;
}

/**
 * One upstream MCP server: its status union and everything that drives it (SPEC §6) — the
 * connection and its attempts (upstream-link.ts), and here the supervision: what a failure
 * means, reconnects on a backoff, suspension of a crash loop, waiting for a sign-in — and the
 * one way an agent's request reaches it (`request`). Its state is private to these classes:
 * it changes only through their methods, the status only in `setStatus`. Its lists live with
 * the catalogues.
 */
export class Upstream extends UpstreamLink {
  readonly #schedule: ReconnectSchedule;
  readonly #port: RequestPort;
  readonly #companion: EraCompanion;
  readonly #gate: CallGate;

  /**
   * `previous` is the server's last upstream (a reload of a config that failed or was
   * disconnected): its status and error carry over until this one changes them.
   */
  constructor(init: UpstreamIdentity & { previous?: Upstream }, host: UpstreamHost, health: HealthSettings) {
    super(init, host, health);
    this.#schedule = new ReconnectSchedule(health, host.clock, host.random);
    // A reload does not end a pause the server asked for.
    if (init.previous) this.throttle.continueFrom(init.previous.throttle);
    this.#companion = new EraCompanion(this, host, { pause: this.throttle, logged: (params) => this.logRing.push(params) });
    this.#gate = new CallGate({ maxConcurrentCalls: health.maxConcurrentCalls, queueSize: health.queueSize }, host.clock);
    this.#port = {
      gate: this.#gate,
      backPressure: this.throttle,
      name: this.name,
      clock: host.clock,
      defaultTimeoutMs: resolveCallTimeout(this.config),
      url: this.config.url,
      live: () => (this.run.status === 'connected' ? this.run.connection : undefined),
      waitForConnection: (signal, budgetMs) => this.waitForConnection(signal, budgetMs),
      reportFailure: (connection, err) => this.reportFailure(connection, err),
      addCaller: (caller, agentOf) => {
        this.callers.add(caller);
        return agentOf(caller);
      },
      removeCaller: (caller) => this.callers.delete(caller),
      target: (primary, method, params, caller, signal) => {
        if (!this.#companion.applies(primary, method, params.name, caller)) return undefined;
        return this.#companion
          .route(primary, method, params.name, caller, signal)
          .then((connection) => (connection ? { connection, release: this.#companion.enter(caller) } : undefined));
      },
    };
  }

  get attempt(): number {
    return this.#schedule.attempt;
  }

  get nextRetryAt(): number | undefined {
    return this.#schedule.nextRetryAt;
  }

  /** The concurrency limit, and the requests running and waiting (issue #35). */
  get concurrency(): ConcurrencyState {
    const gate = this.#gate;
    return { inFlight: gate.inFlight, queued: gate.queued, limit: gate.limit.value, mode: gate.limit.mode, reason: gate.limit.reason };
  }

  /** Requests running and waiting, the limit and why, the queue's bound, and the pause the server asked for (issues #26, #35). */
  get traffic(): TrafficState {
    const gate = this.#gate;
    const until = this.throttle.until;
    const { changedAt } = gate.limit;
    const serviceMs = gate.serviceMs;
    return {
      ...this.concurrency,
      limitChangedAt: changedAt === undefined ? null : new Date(changedAt).toISOString(),
      queueBound: gate.queueBound,
      queueMode: gate.queueMode,
      serviceMs: serviceMs === undefined ? null : Math.round(serviceMs),
      pausedUntil: until === undefined ? null : new Date(until).toISOString(),
    };
  }

  /** How long queued requests waited for a slot (`/metrics`). */
  get queueWaits(): WaitHistogram {
    return this.#gate.waits;
  }

  /** The era companion's state (era-companion.ts), for `GET /servers/:name`. */
  get companion(): CompanionState {
    return this.#companion.state(this.run.status === 'connected' ? this.run.connection : undefined);
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
    if (this.#companion.owns(connection)) return this.#companion.failed(connection, err);
    const kind = classifyFailure(err);
    if (kind === 'auth-required' || kind === 'auth-failed') {
      this.#signInLost(connection, toErrorInfo(err));
      return kind;
    }
    if (!meansConnectionLost(kind)) return kind;
    if (kind === 'session-expired') {
      const error: ErrorInfo = { code: 'UPSTREAM_SESSION_EXPIRED', message: `MCP server "${this.name}" no longer knows the session (HTTP 404); starting a new one` };
      this.lost(connection, error, { crash: false, immediate: true });
    } else {
      this.lost(connection, toErrorInfo(err, 'SERVER_CLOSED'), { crash: true, immediate: false });
    }
    return kind;
  }

  /** Tears everything down (see UpstreamLink.stop); no reconnect stays scheduled. */
  override async stop(): Promise<void> {
    this.#schedule.reset();
    await Promise.all([super.stop(), this.#companion.close()]);
  }

  protected override onConnected(...args: Parameters<UpstreamLink['onConnected']>): void {
    this.#schedule.reset();
    super.onConnected(...args);
  }

  protected connectFailed(error: ErrorInfo, cause: ToolsChangedCause): void {
    if (error.code === 'UPSTREAM_AUTH_REQUIRED') this.#needsAuth(error, cause);
    else this.failWith(error, cause);
  }

  // --- losing the connection and coming back ----------------------------------------------

  /** The connection is gone (closed, frozen, forgotten): reconnect, or suspend a crash loop. */
  protected lost(connection: ServerConnection, error: ErrorInfo, how: { crash: boolean; immediate: boolean }): void {
    if (this.run.connection !== connection) return;
    this.detachConnection();
    // The server may have restarted under it: its companion session is no better.
    void this.#companion.close();
    this.run.lastExit = connection.exitStatus ?? this.run.lastExit;
    this.retired.retire(connection);
    this.host.markStale(this);
    const next = this.#schedule.afterLoss(how.crash);
    if (next.kind === 'stay-down') {
      this.setStatus('disconnected', error);
      return;
    }
    if (next.kind === 'suspend') {
      const message =
        `MCP server "${this.name}" crashed too many times (${next.crashes} times within ` +
        `${Math.round(this.health.crashWindowMs / 1000)} s) and is suspended until it is reloaded. Last failure: ${error.message}`;
      this.ready.reject({ code: 'SERVER_SUSPENDED', message });
      this.setStatus('failed', { code: 'SERVER_SUSPENDED', message });
      return;
    }
    this.#scheduleReconnect(error, how.immediate ? 0 : undefined);
  }

  #scheduleReconnect(error: ErrorInfo, delayMs?: number): void {
    this.#schedule.schedule(() => void this.#reconnect(), delayMs);
    this.ready.open();
    this.setStatus('reconnecting', error);
  }

  async #reconnect(): Promise<void> {
    const generation = ++this.generation;
    // Never two of the same server at once (a lock file, a port): the old one goes first.
    await this.closeRetired();
    if (generation !== this.generation) return;
    try {
      const connected = await this.connectOnce(generation);
      if (connected) this.onConnected(connected, 'reconnect');
    } catch (err) {
      if (generation !== this.generation) return;
      const error = toErrorInfo(err, 'UPSTREAM_CONNECT_FAILED');
      // A step-up refused (issue #29) fails again on every reconnect: nothing but a person's `login` changes it.
      if (error.code === 'LOOP_DETECTED' || isStepUpRefusal(err)) {
        this.failWith(error, 'reconnect');
        return;
      }
      if (error.code === 'UPSTREAM_AUTH_REQUIRED') {
        // Only a person can fix this; retrying on a schedule would only pile up sign-ins.
        this.#needsAuth(error, 'reconnect');
        return;
      }
      this.host.log.debug({ server: this.name, attempt: this.#schedule.attempt, err: error.message }, 'reconnect attempt failed');
      this.#scheduleReconnect(error);
    }
  }

  /**
   * The server refused our credentials mid-life (a refresh token that was rejected, a revoked
   * grant, more scope wanted): drop the connection and wait for a sign-in — or fail, when
   * signing in again would not help (a step-up refused, `UPSTREAM_AUTH_FAILED`).
   */
  #signInLost(connection: ServerConnection, error: ErrorInfo): void {
    if (this.run.connection !== connection) return;
    this.detachConnection();
    this.run.lastExit = connection.exitStatus ?? this.run.lastExit;
    void connection.close();
    void this.#companion.close();
    if (error.code === 'UPSTREAM_AUTH_REQUIRED') this.#needsAuth(error, 'reconnect');
    else this.failWith(error, 'reconnect');
  }

  /**
   * Waiting for a person (`needs_auth`): no reconnects on a schedule, calls answered at once
   * with `UPSTREAM_AUTH_REQUIRED`, and the last known (or cached) tools kept listed as deferred.
   */
  #needsAuth(error: ErrorInfo, cause: ToolsChangedCause): void {
    this.#schedule.reset();
    this.host.holdForSignIn(this, cause);
    this.ready.reject(error);
    this.setStatus('needs_auth', error);
  }

  /** Failed for good (until an operator acts): its tools go, waiting callers learn why. */
  protected failWith(error: ErrorInfo, cause: ToolsChangedCause): void {
    this.host.dropTools(this, cause);
    this.ready.reject(error);
    this.setStatus('failed', error);
  }

  protected pingFailed(connection: ServerConnection, err: unknown): void {
    if (this.run.connection !== connection) return;
    if (isSwitchboardError(err, 'UPSTREAM_PING_TIMEOUT')) {
      this.lost(connection, toErrorInfo(err), { crash: true, immediate: false });
      return;
    }
    // Anything but a lost connection (an error answer, say) still proves the server is alive —
    // unless the failure took the connection out of service (a sign-in is needed).
    if (!meansConnectionLost(this.reportFailure(connection, err)) && this.run.connection === connection) this.startPings(connection);
  }
}
