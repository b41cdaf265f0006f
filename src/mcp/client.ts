import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
  type Root,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { ServerConfig, TransportKind } from '../config/types.js';
import { SwitchboardError, errorMessage } from '../errors.js';
import { MAX_TIMER_MS, abortable, createDeadline, type Deadline } from '../util/abort.js';
import { ListenerSet } from '../util/listeners.js';
import { McpServerConnection, closeClient, describeExit, withStderr, type ServerConnection } from './connection.js';
import { formatLogMessage } from './log-message.js';
import { StderrRing } from './stderr-ring.js';
import { StdioProcessTransport, type ExitStatus } from './stdio-transport.js';
import { createTransport, httpStatusOf, isHttpClientError, transportKindOf } from './transports.js';

export type { CallToolOptions, RequestOptions, ServerConnection } from './connection.js';
export { StderrRing } from './stderr-ring.js';

export interface ConnectOptions {
  /** Caller abort (daemon shutdown, disconnect): the attempt is torn down and rejects with the reason. */
  signal?: AbortSignal;
  /** Bounds spawn + initialize, and later list and ping; 0 = none. @default resolveConnectTimeout(config) */
  timeoutMs?: number;
  /** Child logger for this server. */
  logger?: Logger;
  /** Answered to roots/list as file:// URIs. @default [process.cwd()] */
  roots?: string[];
  /** Extra daemon environment variable names passed to stdio children. @default [] */
  inheritEnv?: string[];
  /** @default { name: 'switchboard', version: '0.1.0' } */
  clientInfo?: { name: string; version: string };
}

export const CONNECT_TIMEOUT_ENV = 'SWITCHBOARD_MCP_TIMEOUT_MS';
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
const DEFAULT_CLIENT_INFO = { name: 'switchboard', version: '0.1.0' };

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

/** Root paths (or file:// URIs) → the roots/list answer. */
export function toRoots(paths: readonly string[]): Root[] {
  return paths.map((path) => {
    if (path.startsWith('file://')) return { uri: path };
    const absolute = resolve(path);
    return { uri: pathToFileURL(absolute).href, name: basename(absolute) || absolute };
  });
}

interface Attempt {
  name: string;
  config: ServerConfig;
  options: ConnectOptions;
  deadline: Deadline;
  stderr: StderrRing;
  toolsListChanged: ListenerSet<[]>;
  /** Set when a stdio child died by itself during the attempt, for the error message. */
  exit?: ExitStatus;
}

/**
 * Connects to one MCP server: transport, `initialize`, `notifications/initialized`. On any
 * failure, timeout or abort the transport is closed (a stdio process group is gone) before this
 * rejects: `UPSTREAM_CONNECT_TIMEOUT`, `UPSTREAM_CONNECT_FAILED` (with `cause` and the stderr
 * tail), or the caller's abort reason.
 */
export async function connectToServer(name: string, config: ServerConfig, opts: ConnectOptions = {}): Promise<ServerConnection> {
  const timeoutMs = opts.timeoutMs ?? resolveConnectTimeout(config);
  const logger = opts.logger;
  const onListenerError = (err: unknown) => logger?.error({ err }, 'listener threw');
  const attempt: Attempt = {
    name,
    config,
    options: opts,
    deadline: createDeadline(opts.signal, timeoutMs),
    stderr: new StderrRing(),
    toolsListChanged: new ListenerSet<[]>(onListenerError),
  };
  const startedAt = Date.now();
  try {
    let kind = transportKindOf(config);
    let session: Awaited<ReturnType<typeof openSession>>;
    try {
      session = await openSession(kind, attempt);
    } catch (err) {
      if (kind !== 'http' || !isHttpClientError(err) || attempt.deadline.signal.aborted) throw err;
      logger?.info({ err: errorMessage(err) }, 'Streamable HTTP refused initialize; falling back to legacy SSE');
      kind = 'sse';
      session = await openSession(kind, attempt);
    }
    const connection = new McpServerConnection({
      name,
      kind,
      ...session,
      stderr: attempt.stderr,
      timeoutMs,
      callTimeoutMs: resolveCallTimeout(config),
      toolsListChanged: attempt.toolsListChanged,
      closed: new ListenerSet<[Error]>(onListenerError),
      logger,
    });
    logger?.debug({ transport: kind, pid: connection.pid, ms: Date.now() - startedAt }, 'transport connected');
    return connection;
  } catch (err) {
    throw connectError(err, attempt, timeoutMs);
  } finally {
    attempt.deadline.dispose();
  }
}

async function openSession(kind: TransportKind, attempt: Attempt) {
  const { options, stderr } = attempt;
  const transport = await createTransport(kind, attempt.config, {
    inheritEnv: options.inheritEnv,
    onStderr: (chunk) => stderr.push(chunk),
  });
  const client = new Client(options.clientInfo ?? DEFAULT_CLIENT_INFO, { capabilities: { roots: {} } });
  const roots = toRoots(options.roots ?? [process.cwd()]);
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots }));
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => attempt.toolsListChanged.emit());
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => stderr.pushLog(formatLogMessage(n.params)));
  client.onerror = (err) => options.logger?.debug({ err: errorMessage(err) }, 'transport error');
  const { signal } = attempt.deadline;
  try {
    // The race is safe: losing it closes the transport below, which ends the work for real.
    await abortable(client.connect(transport, { signal, timeout: MAX_TIMER_MS }), signal);
    return { client, transport };
  } catch (err) {
    if (transport instanceof StdioProcessTransport) attempt.exit = transport.exitStatus;
    await closeClient(client, transport);
    throw err;
  }
}

function connectError(err: unknown, attempt: Attempt, timeoutMs: number): unknown {
  const callerSignal = attempt.options.signal;
  if (callerSignal?.aborted) return callerSignal.reason;
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
