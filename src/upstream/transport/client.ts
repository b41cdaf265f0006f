import type { OAuthClientProvider } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import type { ServerConfig } from '../../config/types.js';
import { SwitchboardError, errorMessage } from '../../errors.js';
import { createDeadline } from '../../util/abort.js';
import type { Clock } from '../../util/clock.js';
import { ListenerSet } from '../../util/listeners.js';
import { McpServerConnection, describeExit, withAttemptOutput, withStderr, type ServerConnection } from './connection.js';
import { negotiateSession } from './negotiate.js';
import { authErrorOf } from '../oauth/auth-errors.js';
import type { EraVerdict, ProtocolMode } from './protocol-era.js';
import type { Throttle } from './retry-after.js';
import type { Attempt } from './session.js';
import type { SandboxContext } from '../process/sandbox-plan.js';
import { toRoots } from './roots.js';
import { ServerTraffic } from './server-traffic.js';
import { DEFAULT_STDERR_LINES, StderrRing } from './stderr-ring.js';
import { httpStatusOf, transportKindOf } from './transports.js';
import { SecretValues } from '../../config/secret-values.js';

export type { CallToolOptions, RequestOptions, ServerConnection } from './connection.js';
export { attemptOutputOf } from './connection.js';
export { StderrRing } from './stderr-ring.js';
export { toRoots } from './roots.js';

export interface ConnectOptions {
  /** Caller abort (daemon shutdown, disconnect): the attempt is torn down and rejects with the reason. */
  signal?: AbortSignal;
  /** Bounds spawn + initialize, and later list and ping; 0 = none. @default resolveConnectTimeout(config) */
  timeoutMs?: number;
  /** Child logger for this server. */
  logger?: Logger;
  /**
   * Roots for a server whose config names none (`config.roots` wins), answered to roots/list as
   * file:// URIs when no agent's call is in progress. @default [] — never the daemon's working
   * directory: a server keeps the folders its own command line names (issue #36 item 1)
   */
  roots?: string[];
  /** Extra daemon environment variable names passed to stdio children. @default [] */
  inheritEnv?: string[];
  /**
   * The daemon's sandbox default and own paths (issue #42). @default none: a server asking for a
   * sandbox gets one without the daemon's paths hidden
   */
  sandbox?: SandboxContext;
  /** @default { name: 'switchboard', version: '0.1.0' } */
  clientInfo?: { name: string; version: string };
  /** Which protocol era to talk. @default config.protocol, else "auto" */
  protocol?: ProtocolMode;
  /** The era verdict cached for this config: used as is, no probe (SPEC §4, §5). */
  verdict?: EraVerdict;
  /**
   * Signs an http/sse server in with OAuth (issue #16): a 401 then starts the authorization
   * flow and the connect fails with `UPSTREAM_AUTH_REQUIRED` until a person signs in.
   */
  authProvider?: OAuthClientProvider;
  /** The server's pause (429/503 with `Retry-After`, issue #26): kept and honoured by every HTTP request. */
  throttle?: Throttle;
  /** Times what the connection waits for on its own (a modern resource subscribe). @default the system clock */
  clock?: Clock;
}

export const CONNECT_TIMEOUT_ENV = 'SWITCHBOARD_MCP_TIMEOUT_MS';
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
const DEFAULT_CLIENT_INFO = { name: 'switchboard', version: '0.1.0' };
/** The longest an `auto` probe of an HTTP server may take. */
const HTTP_PROBE_TIMEOUT_MS = 5_000;
/** What the probe of a stdio server leaves of the connect timeout for `initialize` after it. */
const INITIALIZE_RESERVE_MS = 5_000;

/**
 * How long `auto` waits for the answer to `server/discover` (issue #36 item 3). A stdio server
 * answers it once it is up, and a first `npx -y` start takes many seconds: it gets the connect
 * timeout less a reserve (at most half) for `initialize`, which follows on the same process when
 * the probe goes unanswered — queued behind it, so a slow 2025-era server answers both. With no
 * connect timeout (0) the default one is the measure: a server that never answers the probe is
 * still spoken to. An HTTP server answers at once or not at all; its probe stays short.
 */
export function probeTimeout(config: ServerConfig, timeoutMs: number): number {
  if (!isStdio(config)) return timeoutMs > 0 ? Math.min(timeoutMs, HTTP_PROBE_TIMEOUT_MS) : HTTP_PROBE_TIMEOUT_MS;
  const budget = timeoutMs > 0 ? timeoutMs : DEFAULT_CONNECT_TIMEOUT_MS;
  return Math.max(1, budget - Math.min(INITIALIZE_RESERVE_MS, Math.floor(budget / 2)));
}

function isStdio(config: ServerConfig): boolean {
  try {
    return transportKindOf(config) === 'stdio';
  } catch {
    return false; // an unknown type fails in the transport, with its own message
  }
}

/** `SWITCHBOARD_MCP_TIMEOUT_MS` > `config.timeout` > 30 000 ms; 0 disables. Invalid values are skipped. */
export function resolveConnectTimeout(config: ServerConfig, env: NodeJS.ProcessEnv = process.env): number {
  return parseTimeout(env[CONNECT_TIMEOUT_ENV]) ?? parseTimeout(config.timeout) ?? DEFAULT_CONNECT_TIMEOUT_MS;
}

/** `config.callTimeout` > 60 000 ms; 0 disables. */
export function resolveCallTimeout(config: ServerConfig): number {
  return parseTimeout(config.callTimeout) ?? DEFAULT_CALL_TIMEOUT_MS;
}

function parseTimeout(value: unknown): number | undefined {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.floor(n) : undefined;
}

/**
 * Connects to one MCP server: transport, era negotiation (`initialize` + `notifications/initialized`,
 * or the modern `server/discover`). On any failure, timeout or abort the transport is closed (a
 * stdio process group is gone) before this rejects: `UPSTREAM_CONNECT_TIMEOUT`,
 * `UPSTREAM_CONNECT_FAILED` (with `cause` and the stderr tail), or the caller's abort reason.
 */
export async function connectToServer(name: string, config: ServerConfig, opts: ConnectOptions = {}): Promise<ServerConnection> {
  const timeoutMs = opts.timeoutMs ?? resolveConnectTimeout(config);
  const logger = opts.logger;
  const onListenerError = (err: unknown) => logger?.error({ err }, 'listener threw');
  const roots = toRoots(config.roots ?? opts.roots ?? []);
  // `config` is resolved: its env and header values are the secrets this server could print.
  const secrets = new SecretValues();
  secrets.remember(name, config);
  const attempt: Attempt = {
    name,
    config,
    deadline: createDeadline(opts.signal, timeoutMs),
    stderr: new StderrRing(DEFAULT_STDERR_LINES, (line) => secrets.maskText(line)),
    toolsListChanged: new ListenerSet<[]>(onListenerError),
    transportErrors: new ListenerSet<[Error]>(onListenerError),
    traffic: new ServerTraffic(roots, onListenerError),
    ...(logger ? { logger } : {}),
    roots,
    ...(opts.inheritEnv ? { inheritEnv: opts.inheritEnv } : {}),
    ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
    clientInfo: opts.clientInfo ?? DEFAULT_CLIENT_INFO,
    probeTimeoutMs: probeTimeout(config, timeoutMs),
    ...(opts.authProvider ? { authProvider: opts.authProvider } : {}),
    ...(opts.throttle ? { throttle: opts.throttle } : {}),
  };
  const startedAt = Date.now();
  try {
    const session = await negotiateSession(attempt, opts.protocol ?? config.protocol ?? 'auto', opts.verdict);
    const connection = new McpServerConnection({
      name,
      ...session,
      stderr: attempt.stderr,
      timeoutMs,
      callTimeoutMs: resolveCallTimeout(config),
      toolsListChanged: attempt.toolsListChanged,
      transportErrors: attempt.transportErrors,
      traffic: attempt.traffic,
      closed: new ListenerSet<[Error]>(onListenerError),
      ...(logger ? { logger } : {}),
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(isUnattended(attempt.authProvider) ? { unattendedAuth: true } : {}),
    });
    logger?.debug({ transport: session.kind, era: connection.era, pid: connection.pid, ms: Date.now() - startedAt }, 'transport connected');
    return connection;
  } catch (err) {
    throw withAttemptOutput(connectError(err, attempt, timeoutMs, opts.signal), attempt.stderr);
  } finally {
    attempt.deadline.dispose();
  }
}

/** An OAuth provider without a redirect URL runs a non-interactive grant: nobody can sign in. */
function isUnattended(provider: OAuthClientProvider | undefined): boolean {
  return provider !== undefined && provider.redirectUrl === undefined;
}

function connectError(err: unknown, attempt: Attempt, timeoutMs: number, callerSignal: AbortSignal | undefined): unknown {
  if (callerSignal?.aborted) return callerSignal.reason;
  const authError = authErrorOf(err, attempt.name, isUnattended(attempt.authProvider));
  if (authError) return authError;
  if (err instanceof SwitchboardError) return new SwitchboardError(err.code, withStderr(err.message, attempt.stderr), { cause: err.cause });
  const server = `MCP server "${attempt.name}"`;
  if (attempt.deadline.timedOut) {
    const message = withStderr(`Connecting to ${server} timed out after ${timeoutMs} ms`, attempt.stderr);
    return new SwitchboardError('UPSTREAM_CONNECT_TIMEOUT', message, { cause: err });
  }
  const status = httpStatusOf(err);
  const detail = `${errorMessage(err)}${status ? ` (HTTP ${status})` : ''}${describeExit(attempt.exit)}`;
  const message = `Could not connect to ${server}: ${detail}`;
  return new SwitchboardError('UPSTREAM_CONNECT_FAILED', withStderr(message, attempt.stderr), { cause: err });
}
