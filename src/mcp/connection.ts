import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  ErrorCode,
  ListToolsResultSchema,
  McpError,
  type CallToolResult,
  type Progress,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { TransportKind } from '../config/types.js';
import { SwitchboardError, type ErrorCode as SwitchboardErrorCode } from '../errors.js';
import { MAX_TIMER_MS, abortable, createDeadline, linkSignal } from '../util/abort.js';
import type { ListenerSet } from '../util/listeners.js';
import { collectToolPages } from './list-tools.js';
import type { StderrRing } from './stderr-ring.js';
import { StdioProcessTransport } from './stdio-transport.js';

export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface CallToolOptions extends RequestOptions {
  onProgress?: (progress: Progress) => void;
}

/** One live upstream MCP server. */
export interface ServerConnection {
  readonly name: string;
  /** The transport actually used (an `http` server may have fallen back to `sse`). */
  readonly transport: TransportKind;
  readonly serverInfo?: { name: string; version: string; title?: string };
  readonly capabilities?: ServerCapabilities;
  /** The stdio child's pid. */
  readonly pid?: number;
  readonly stderr: StderrRing;
  /** Every tool, following `nextCursor`; bounded by the server's connect timeout. */
  listTools(opts?: RequestOptions): Promise<Tool[]>;
  /** Bounded by the server's call timeout, which progress notifications reset. */
  callTool(name: string, args: Record<string, unknown> | undefined, opts?: CallToolOptions): Promise<CallToolResult>;
  ping(opts?: RequestOptions): Promise<void>;
  /** Fires once when the transport closes on its own (never after `close()`). */
  onClose(listener: (reason: Error) => void): () => void;
  /** Fires on `notifications/tools/list_changed`. */
  onToolsListChanged(listener: () => void): () => void;
  /** Idempotent and joinable: a second call returns the first call's promise. */
  close(): Promise<void>;
}

export interface ConnectionParts {
  name: string;
  kind: TransportKind;
  client: Client;
  transport: Transport;
  stderr: StderrRing;
  /** Bounds list and ping; 0 disables. */
  timeoutMs: number;
  /** Bounds a tool call between progress notifications; 0 disables. */
  callTimeoutMs: number;
  toolsListChanged: ListenerSet<[]>;
  closed: ListenerSet<[Error]>;
  logger?: Logger;
}

/** How long close() waits for an HTTP server to acknowledge the session's end. */
const TERMINATE_SESSION_MS = 1_000;
const STDERR_TAIL_LINES = 10;
const ignoreProgress = () => {};

type State = 'open' | 'crashed' | 'closed';

export class McpServerConnection implements ServerConnection {
  readonly name: string;
  readonly transport: TransportKind;
  readonly serverInfo?: { name: string; version: string; title?: string };
  readonly capabilities?: ServerCapabilities;
  readonly pid?: number;
  readonly stderr: StderrRing;

  readonly #parts: ConnectionParts;
  #state: State = 'open';
  #closeReason?: Error;
  #closing?: Promise<void>;

  constructor(parts: ConnectionParts) {
    this.#parts = parts;
    this.name = parts.name;
    this.transport = parts.kind;
    this.stderr = parts.stderr;
    this.serverInfo = parts.client.getServerVersion();
    this.capabilities = parts.client.getServerCapabilities();
    if (parts.transport instanceof StdioProcessTransport) this.pid = parts.transport.pid;
    parts.client.onclose = () => this.#onTransportClosed();
  }

  async listTools(opts: RequestOptions = {}): Promise<Tool[]> {
    this.#assertOpen();
    const timeoutMs = opts.timeoutMs ?? this.#parts.timeoutMs;
    const deadline = createDeadline(opts.signal, timeoutMs);
    try {
      // client.request rather than client.listTools: the latter resets its output-schema cache on
      // every page, and we pass results through unvalidated anyway (see callTool). Each page gets
      // its own linked signal: SDK v1 leaves an abort listener on the signal of every request, and
      // eleven pages on one deadline signal made Node print MaxListenersExceededWarning.
      return await collectToolPages((cursor) =>
        this.#parts.client.request(
          { method: 'tools/list', params: cursor === undefined ? undefined : { cursor } },
          ListToolsResultSchema,
          { signal: AbortSignal.any([deadline.signal]), timeout: MAX_TIMER_MS },
        ),
      );
    } catch (err) {
      throw this.#requestError(err, opts.signal, deadline.timedOut, 'UPSTREAM_CONNECT_TIMEOUT', `tools/list timed out after ${timeoutMs} ms`);
    } finally {
      deadline.dispose();
    }
  }

  async callTool(name: string, args: Record<string, unknown> | undefined, opts: CallToolOptions = {}): Promise<CallToolResult> {
    this.#assertOpen();
    const timeoutMs = opts.timeoutMs ?? this.#parts.callTimeoutMs;
    const link = linkSignal(opts.signal);
    try {
      // The deadline is the SDK's own request timeout because only that one can be reset by
      // progress; asking for progress (a token) is what lets a long tool keep itself alive. When
      // it fires, or the per-call signal aborts, the SDK sends notifications/cancelled upstream.
      // client.request rather than client.callTool: results pass through unchanged (SPEC §7), so
      // no client-side outputSchema validation.
      return await this.#parts.client.request(
        { method: 'tools/call', params: args === undefined ? { name } : { name, arguments: args } },
        CallToolResultSchema,
        {
          signal: link.signal,
          // Past setTimeout's limit Node fires at once; a longer deadline is no deadline.
          timeout: timeoutMs > 0 ? Math.min(timeoutMs, MAX_TIMER_MS) : MAX_TIMER_MS,
          resetTimeoutOnProgress: true,
          onprogress: opts.onProgress ?? ignoreProgress,
        },
      );
    } catch (err) {
      const timedOut = err instanceof McpError && err.code === ErrorCode.RequestTimeout;
      throw this.#requestError(err, opts.signal, timedOut, 'TOOL_CALL_TIMEOUT', `Tool "${name}" timed out after ${timeoutMs} ms`);
    } finally {
      link.dispose();
    }
  }

  async ping(opts: RequestOptions = {}): Promise<void> {
    this.#assertOpen();
    const timeoutMs = opts.timeoutMs ?? this.#parts.timeoutMs;
    const deadline = createDeadline(opts.signal, timeoutMs);
    try {
      await this.#parts.client.ping({ signal: deadline.signal, timeout: MAX_TIMER_MS });
    } catch (err) {
      throw this.#requestError(err, opts.signal, deadline.timedOut, 'UPSTREAM_CONNECT_TIMEOUT', `ping timed out after ${timeoutMs} ms`);
    } finally {
      deadline.dispose();
    }
  }

  onClose(listener: (reason: Error) => void): () => void {
    return this.#parts.closed.add(listener);
  }

  onToolsListChanged(listener: () => void): () => void {
    return this.#parts.toolsListChanged.add(listener);
  }

  close(): Promise<void> {
    return (this.#closing ??= this.#shutdown());
  }

  async #shutdown(): Promise<void> {
    if (this.#state === 'open') this.#state = 'closed';
    this.#parts.closed.clear();
    this.#parts.toolsListChanged.clear();
    const { client, transport } = this.#parts;
    // Streamable HTTP (by shape: its module is loaded on demand, see transports.ts).
    if ('terminateSession' in transport && typeof transport.terminateSession === 'function') {
      // Let the server free the session; closing the transport below aborts the DELETE if it hangs.
      const deadline = createDeadline(undefined, TERMINATE_SESSION_MS);
      await abortable((transport.terminateSession as () => Promise<void>).call(transport), deadline.signal).catch(() => {});
      deadline.dispose();
    }
    await closeClient(client, transport);
    this.#parts.logger?.debug('closed');
  }

  #onTransportClosed(): void {
    if (this.#state !== 'open') return;
    this.#state = 'crashed';
    const exit = this.#parts.transport instanceof StdioProcessTransport ? this.#parts.transport.exitStatus : undefined;
    const reason = new SwitchboardError(
      'SERVER_CLOSED',
      withStderr(`MCP server "${this.name}" closed the connection${describeExit(exit)}`, this.stderr),
    );
    this.#closeReason = reason;
    this.#parts.logger?.warn({ exitCode: exit?.code, signal: exit?.signal }, 'connection closed unexpectedly');
    this.#parts.toolsListChanged.clear();
    this.#parts.closed.emit(reason);
    this.#parts.closed.clear();
  }

  #assertOpen(): void {
    if (this.#state !== 'open') throw this.#closedError(this.#closeReason);
  }

  #closedError(cause: unknown): SwitchboardError {
    if (this.#state === 'crashed' && this.#closeReason) {
      return new SwitchboardError('SERVER_CLOSED', this.#closeReason.message, { cause });
    }
    return new SwitchboardError('SERVER_CLOSED', `The connection to MCP server "${this.name}" is closed`, { cause });
  }

  /** Maps an SDK rejection: caller aborts stay aborts, then closed, then timeout; others pass. */
  #requestError(err: unknown, signal: AbortSignal | undefined, timedOut: boolean, code: SwitchboardErrorCode, message: string): unknown {
    if (signal?.aborted) return signal.reason;
    if (this.#state !== 'open') return this.#closedError(err);
    if (timedOut) return new SwitchboardError(code, `${message} (MCP server "${this.name}")`, { cause: err });
    if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) return this.#closedError(err);
    return err;
  }
}

/**
 * Closes the SDK client and, for stdio, waits for the process group to be gone. `client.close()`
 * alone is not enough: after a failed initialize the SDK has already let go of the transport
 * (`void this.close()`) without waiting for it.
 */
export async function closeClient(client: Client, transport: Transport): Promise<void> {
  await client.close().catch(() => {});
  if (transport instanceof StdioProcessTransport) await transport.close();
}

export function describeExit(exit: { code: number | null; signal: NodeJS.Signals | null } | undefined): string {
  if (!exit) return '';
  return exit.signal ? ` (killed by ${exit.signal})` : ` (exited with code ${exit.code})`;
}

/** Appends the last stderr lines, the server's own account of what went wrong. */
export function withStderr(message: string, stderr: StderrRing): string {
  const tail = stderr.tail(STDERR_TAIL_LINES);
  return tail ? `${message}\nstderr:\n${tail}` : message;
}
