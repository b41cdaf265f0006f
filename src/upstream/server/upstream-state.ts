import type { ServerCapabilities } from '@modelcontextprotocol/client';
import type { ServerConfig, ServerSource } from '../../config/types.js';
import { SwitchboardError, type ErrorInfo } from '../../errors.js';
import type { ServerStatus } from '../../events/daemon-events.js';
import type { CallerChannel } from '../transport/caller.js';
import { LogMessageRing, type LoggedMessage } from '../transport/log-message.js';
import type { ServerConnection } from '../transport/client.js';
import type { ProtocolEra } from '../transport/protocol-era.js';
import type { ExitStatus } from '../transport/stdio-transport.js';
import type { UpstreamHost, UpstreamIdentity } from './upstream-host.js';

/** Everything that changes about one upstream, in one record (STYLE rule 7, fastify's kState). */
export interface RunState {
  status: ServerStatus;
  /** The last failure, with its stable code; cleared by a successful connect. */
  lastError: ErrorInfo | undefined;
  connection: ServerConnection | undefined;
  connectedSince: number | undefined;
  /** What the server declared when it last connected (kept while it reconnects). */
  capabilities: ServerCapabilities | undefined;
  /** The protocol era it was last spoken to in (kept while it reconnects, like the capabilities). */
  era: ProtocolEra | undefined;
  /** Successful reconnects since this config was loaded. */
  restarts: number;
  lastExit: ExitStatus | undefined;
  /** The stderr lines of the last stdio child, once its connection is gone. */
  stderrTail: () => string[];
}

/**
 * An upstream's identity and state, readable by everyone and changed only by the state machine
 * (upstream.ts, a subclass): the fields are protected, the status changes in `setStatus` alone.
 */
export abstract class UpstreamState implements UpstreamIdentity {
  readonly name: string;
  readonly config: ServerConfig;
  readonly configHash: string;
  readonly source: ServerSource;

  protected readonly run: RunState = {
    status: 'disconnected',
    lastError: undefined,
    connection: undefined,
    connectedSince: undefined,
    capabilities: undefined,
    era: undefined,
    restarts: 0,
    lastExit: undefined,
    stderrTail: () => [],
  };
  /** Agent requests in progress on this server: where its requests and log messages go. */
  protected readonly callers = new Set<CallerChannel>();
  protected readonly logRing = new LogMessageRing();

  protected constructor(
    init: UpstreamIdentity & { previous?: UpstreamState },
    protected readonly host: UpstreamHost,
  ) {
    this.name = init.name;
    this.config = init.config;
    this.configHash = init.configHash;
    this.source = init.source;
    // A reload of a config that failed or was disconnected: status and error carry over until changed.
    if (init.previous) {
      this.run.status = init.previous.status;
      this.run.lastError = init.previous.lastError;
    }
  }

  get status(): ServerStatus {
    return this.run.status;
  }
  get lastError(): ErrorInfo | undefined {
    return this.run.lastError;
  }
  get connection(): ServerConnection | undefined {
    return this.run.connection;
  }
  get connectedSince(): number | undefined {
    return this.run.connectedSince;
  }
  get capabilities(): ServerCapabilities | undefined {
    return this.run.capabilities;
  }
  get era(): ProtocolEra | undefined {
    return this.run.era;
  }
  get restarts(): number {
    return this.run.restarts;
  }
  get lastExit(): ExitStatus | undefined {
    return this.run.lastExit;
  }
  /** The reconnect attempt scheduled or running; 0 when none. */
  abstract get attempt(): number;
  abstract get nextRetryAt(): number | undefined;

  /** Whether a connect or reconnect is under way or scheduled. */
  get pending(): boolean {
    return this.run.status === 'connecting' || this.run.status === 'reconnecting';
  }

  /** The last log messages the server sent (`GET /servers/:name`), oldest first. */
  logMessages(): LoggedMessage[] {
    return this.logRing.list();
  }

  /** The stderr lines of the current (or last) stdio child. */
  stderrLines(): string[] {
    return this.run.connection ? this.run.connection.stderr.lines() : this.run.stderrTail();
  }

  /** Why a request cannot wait for this server: it is not coming back on its own. */
  protected notConnectedError(): SwitchboardError {
    const { status, lastError } = this.run;
    if (lastError?.code === 'SERVER_SUSPENDED') return new SwitchboardError('SERVER_SUSPENDED', lastError.message);
    if (status === 'needs_auth' && lastError) return new SwitchboardError('UPSTREAM_AUTH_REQUIRED', lastError.message);
    const why = lastError ? `: ${lastError.message}` : '';
    return new SwitchboardError('SERVER_NOT_CONNECTED', `Server "${this.name}" is ${status}${why}`);
  }

  /** The one place the status changes; the host logs and emits each transition once. */
  protected setStatus(next: ServerStatus, error?: ErrorInfo): void {
    const previous = this.run.status;
    if (error !== undefined) this.run.lastError = error;
    // A repeated `reconnecting` is still news: it carries the next attempt and its time.
    if (previous === next && error === undefined && next !== 'reconnecting') return;
    this.run.status = next;
    this.host.statusChanged({
      server: this.name,
      status: next,
      previous,
      error: this.run.lastError,
      attempt: this.attempt,
      nextRetryAt: this.nextRetryAt,
      restarts: this.run.restarts,
    });
  }
}
