import type { Progress } from '@modelcontextprotocol/client';
import { errorMessage, isSwitchboardError, SwitchboardError } from '../../errors.js';
import type { Clock } from '../../util/clock.js';
import { sleep } from '../../util/wait-for.js';
import type { CallerChannel } from '../transport/caller.js';
import type { AgentOptions } from '../transport/input-required.js';
import { DEFAULT_CALL_TIMEOUT_MS, type ServerConnection } from '../transport/client.js';
import type { CallToolOptions } from '../transport/server-connection.js';
import { httpStatusOf } from '../transport/transports.js';
import type { BackPressure } from './back-pressure.js';
import type { CallGate, Release } from './call-gate.js';
import type { UpstreamTrace } from '../../telemetry/telemetry.js';
import { mayHaveBeenDelivered, meansConnectionLost, type FailureKind } from './failure.js';

/** The requests an agent's work sends to an upstream (SPEC §7). */
export type UpstreamMethod =
  | 'tools/call'
  | 'prompts/get'
  | 'resources/read'
  | 'completion/complete'
  | 'resources/subscribe'
  | 'resources/unsubscribe'
  | 'logging/setLevel'
  /** A server's own task (issue #41: one it made for a task-augmented `tools/call`, passed through). */
  | 'tasks/get'
  | 'tasks/result'
  | 'tasks/cancel';

export interface UpstreamRequestOptions {
  signal?: AbortSignal;
  /**
   * Bounds the whole request, the wait for a connecting or reconnecting server included. `0`: no
   * deadline for the request itself; the wait for a connection is still bounded (by the default
   * call timeout), so nobody waits unbounded on a server that may never come back.
   * @default the server's `callTimeout`
   */
  timeoutMs?: number;
  /** Each progress notification of the server for this request (each also resets its deadline). */
  onProgress?: (progress: Progress) => void;
  /** The agent behind the request: the server's sampling / elicitation / roots requests go to it. */
  caller?: CallerChannel;
  /**
   * Whether the request may be sent again after the connection was lost under it, when it may
   * have reached the server (a request that never arrived is always retried, once).
   */
  replaySafe: boolean;
  /** How errors name the request, e.g. `Tool "echo"` or `prompts/get`. */
  label: string;
  /** Runs each attempt under its own span and puts the trace context into its `_meta` (issue #26). @default none */
  trace?: UpstreamTrace;
}

/** What the request loop needs of its upstream (upstream.ts implements it). */
export interface RequestPort {
  readonly name: string;
  readonly clock: Clock;
  /** The server's `callTimeout`. */
  readonly defaultTimeoutMs: number;
  /** The server's URL (http and sse), for the attempts' spans. */
  readonly url?: string | undefined;
  /** The live connection when the server is connected (the common case: no wait, no promise). */
  live(): ServerConnection | undefined;
  waitForConnection(signal: AbortSignal | undefined, budgetMs: number): Promise<ServerConnection>;
  /** A request on `connection` failed: the state machine decides what that means for the server. */
  reportFailure(connection: ServerConnection, err: unknown): FailureKind;
  /** The agent of a request in progress, for the server's questions and log messages. */
  addCaller(caller: CallerChannel, agentOf: (caller: CallerChannel) => AgentOptions): AgentOptions;
  removeCaller(caller: CallerChannel): void;
  /**
   * Where a request goes once the server is connected: undefined for `primary` (synchronously, so
   * the common request costs no extra tick), or a promise of the era companion's connection for a
   * 2025-era agent's call (era-companion.ts), with `release` to end its stay there; a promise of
   * undefined when the companion does not serve it after all.
   */
  target(
    primary: ServerConnection,
    method: UpstreamMethod,
    params: Record<string, unknown>,
    caller: CallerChannel | undefined,
    signal: AbortSignal | undefined,
  ): Promise<{ connection: ServerConnection; release: () => void } | undefined> | undefined;
  /** The server's concurrency limit and queue (issues #26, #35). */
  readonly gate: CallGate;
  /** The pause the server asked for (429/503 with `Retry-After`, issue #26). */
  readonly backPressure: BackPressure;
}

/** The requests that take one of the server's slots (its concurrency limit): work, not bookkeeping. */
const GATED: ReadonlySet<UpstreamMethod> = new Set(['tools/call', 'prompts/get', 'resources/read', 'completion/complete']);

/** How many pauses one request sits out before it gives up (its deadline usually ends it first). */
const MAX_PAUSES = 5;

/**
 * One request to one upstream, of any kind (SPEC §6, §7). One deadline bounds the wait for a
 * connection and the request. A failure is reported to the server's state machine; when it meant
 * the connection was lost, the request is sent once more after the reconnect (within the same
 * deadline) if it never reached the server or `replaySafe` says a replay is harmless — otherwise
 * the caller learns that it may or may not have run (`CALL_OUTCOME_UNKNOWN`).
 *
 * Throws our own codes for the wait, the deadline and a lost connection; an error the server
 * answered with is thrown as it came (the caller's protocol maps it). A caller abort stays an abort.
 */
export async function requestThroughUpstream(
  port: RequestPort,
  method: UpstreamMethod,
  params: Record<string, unknown>,
  options: UpstreamRequestOptions,
  agentOf: (caller: CallerChannel) => AgentOptions,
): Promise<Record<string, unknown>> {
  const { signal, caller, clock } = { ...options, clock: port.clock };
  const started = clock.now();
  const totalMs = options.timeoutMs ?? port.defaultTimeoutMs;
  // At least 1 ms: a spent deadline must still fail as a timeout, not turn into "no deadline".
  const remaining = (): number => (totalMs > 0 ? Math.max(1, totalMs - (clock.now() - started)) : 0);
  // Waits (a slot, a pause) are bounded even without a deadline of the request's own.
  const waitBudget = (): number => (totalMs > 0 ? remaining() : DEFAULT_CALL_TIMEOUT_MS);
  const timedOut = (where: string) => () =>
    new SwitchboardError(
      method === 'tools/call' ? 'TOOL_CALL_TIMEOUT' : 'UPSTREAM_TIMEOUT',
      `${options.label} timed out after ${totalMs || DEFAULT_CALL_TIMEOUT_MS} ms ${where} (MCP server "${port.name}")`,
    );
  const release: Release | undefined = GATED.has(method)
    ? (port.gate.tryEnter() ??
      (await port.gate.enter(port.name, { ...(signal ? { signal } : {}), timeoutMs: waitBudget(), timedOut: timedOut(`waiting for one of its ${port.gate.limit.value} slots`) })))
    : undefined;
  const agent = caller ? port.addCaller(caller, agentOf) : undefined;
  // How long the server took to answer, for the gate's limit; left undefined when it did not answer.
  let answeredInMs: number | undefined;
  try {
    let retried = false;
    let pauses = 0;
    for (;;) {
      let connection = port.live();
      if (!connection) {
        try {
          connection = await port.waitForConnection(signal, totalMs > 0 ? remaining() : DEFAULT_CALL_TIMEOUT_MS);
        } catch (err) {
          if (signal?.aborted) throw signal.reason ?? err;
          throw isSwitchboardError(err) ? err : new SwitchboardError('SERVER_NOT_CONNECTED', errorMessage(err), { cause: err });
        }
      }
      const pause = port.backPressure.remainingMs();
      if (pause > 0) await sitOut(port, pause, waitBudget(), signal);
      const routed = port.target(connection, method, params, caller, signal);
      const target = routed === undefined ? undefined : await routed;
      if (target) connection = target.connection;
      const sentAt = clock.now();
      try {
        const opts: CallToolOptions = {
          ...(signal ? { signal } : {}),
          ...(options.onProgress ? { onProgress: options.onProgress } : {}),
          ...(agent ? { agent } : {}),
          timeoutMs: remaining(),
        };
        const { trace } = options;
        const on = connection;
        const to = { server: port.name, transport: on.transport, protocolVersion: on.protocolVersion, url: port.url };
        const result = await (trace ? trace.attempt(to, method, params, (meta) => send(on, method, params, { ...opts, meta })) : send(on, method, params, opts));
        answeredInMs = clock.now() - sentAt;
        return result;
      } catch (err) {
        if (signal?.aborted) throw signal.reason ?? err;
        // The request got what was left of the deadline; the caller knows the deadline itself.
        if (isSwitchboardError(err, 'TOOL_CALL_TIMEOUT') || isSwitchboardError(err, 'UPSTREAM_TIMEOUT')) {
          answeredInMs = clock.now() - sentAt;
          throw new SwitchboardError(err.code, `${options.label} timed out after ${totalMs} ms (MCP server "${port.name}")`, { cause: err });
        }
        // The server asked for a pause and did not run the request: not a failure of the server.
        if (isPauseAnswer(err) && port.backPressure.remainingMs() > 0 && pauses++ < MAX_PAUSES) continue;
        const kind = port.reportFailure(connection, err);
        if (!meansConnectionLost(kind)) {
          answeredInMs = clock.now() - sentAt;
          throw err;
        }
        if (!retried && (!mayHaveBeenDelivered(kind) || options.replaySafe)) {
          retried = true;
          continue;
        }
        if (!mayHaveBeenDelivered(kind)) throw isSwitchboardError(err) ? err : new SwitchboardError('SERVER_CLOSED', errorMessage(err), { cause: err });
        const why = retried ? 'it was sent again after a reconnect, and that connection was lost too' : 'it was not retried because it is not marked read-only or idempotent';
        throw new SwitchboardError(
          'CALL_OUTCOME_UNKNOWN',
          `The connection to MCP server "${port.name}" was lost while ${options.label} was running; it may or may not have run, and ${why} (${errorMessage(err)})`,
          { cause: err },
        );
      } finally {
        target?.release();
      }
    }
  } finally {
    if (caller) port.removeCaller(caller);
    release?.(answeredInMs);
  }
}

/** A 429 or 503 answer: the server refused the request for now, without running it. */
function isPauseAnswer(err: unknown): boolean {
  const status = httpStatusOf(err);
  return status === 429 || status === 503;
}

/**
 * Waits out the server's pause when it ends within the request's budget; otherwise answers at
 * once with `SERVER_BUSY` and how long the pause has left.
 */
async function sitOut(port: RequestPort, pauseMs: number, budgetMs: number, signal: AbortSignal | undefined): Promise<void> {
  if (pauseMs >= budgetMs) {
    const until = new Date(port.clock.now() + pauseMs).toISOString();
    throw new SwitchboardError(
      'SERVER_BUSY',
      `MCP server "${port.name}" asked for a pause until ${until} (HTTP 429/503 with Retry-After); the request's deadline ends before that`,
      {
        retryAfterMs: pauseMs,
      },
    );
  }
  await sleep(pauseMs, { signal, clock: port.clock });
}

/** The wire form of each kind: a tool call and a subscription have their own on the connection. */
function send(connection: ServerConnection, method: UpstreamMethod, params: Record<string, unknown>, opts: CallToolOptions): Promise<Record<string, unknown>> {
  switch (method) {
    case 'tools/call':
      // A task-augmented call (`params.task`) answers the server's CreateTaskResult, forwarded as is.
      if (params.task !== undefined) return connection.forward(method, params, opts);
      return connection.callTool(params.name as string, params.arguments as Record<string, unknown> | undefined, opts) as Promise<Record<string, unknown>>;
    case 'resources/subscribe':
      return connection.subscribeResource(params.uri as string, opts).then(() => ({}));
    case 'resources/unsubscribe':
      return connection.unsubscribeResource(params.uri as string, opts).then(() => ({}));
    default:
      return connection.forward(method, params, opts);
  }
}
