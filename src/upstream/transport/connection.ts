import type { CallToolResult, ServerCapabilities, StandardSchemaV1 } from '@modelcontextprotocol/client';
import type { TransportKind } from '../../config/types.js';
import { errorMessage, SwitchboardError, type ErrorCode as SwitchboardErrorCode } from '../../errors.js';
import { MAX_TIMER_MS, createDeadline, linkSignal } from '../../util/abort.js';
import { waitFor } from '../../util/wait-for.js';
import { collectPages, collectToolPages, type Listing, type Page, type ToolListing } from './list-tools.js';
import { authErrorOf } from '../oauth/auth-errors.js';
import type { EraVerdict, ProtocolEra } from './protocol-era.js';
import { withAnswers } from './input-required.js';
import { isNotMcp, PassThroughResult, ToolPageResult } from './result-schemas.js';
import type { AgentRequestHandler, RelayedNotification } from './server-traffic.js';
import { ModernListen } from './modern-listen.js';
import { completeMissingResultType } from './result-type.js';
import type { CallToolOptions, ListItem, ListKind, ListToolsOptions, RequestOptions, ServerConnection } from './server-connection.js';
import type { StderrRing } from './stderr-ring.js';
import { LIST_METHODS, listParams, type ConnectionParts } from './connection-parts.js';
import { BROKEN_PIPE_WAIT_MS, closeClient, describeExit, isBrokenPipe, withStderr } from './connection-failure.js';
import { StdioProcessTransport, type ExitStatus } from './stdio-transport.js';
import { sdk } from '../sdk.js';

export { attemptOutputOf, closeClient, describeExit, withAttemptOutput, withStderr } from './connection-failure.js';
export type { ConnectionParts } from './connection-parts.js';
export type { CallToolOptions, ListItem, ListKind, ListToolsOptions, RequestOptions, ServerConnection } from './server-connection.js';

/** How long close() waits for an HTTP server to acknowledge the session's end. */
const TERMINATE_SESSION_MS = 1_000;
const ignoreProgress = () => {};

type State = 'open' | 'crashed' | 'closed';

export class McpServerConnection implements ServerConnection {
  readonly name: string;
  readonly transport: TransportKind;
  readonly era: ProtocolEra;
  readonly protocolVersion: string | undefined;
  readonly verdict: EraVerdict;
  readonly verdictFromCache: boolean;
  readonly serverInfo?: { name: string; version: string; title?: string };
  readonly instructions: string | undefined;
  readonly capabilities?: ServerCapabilities;
  readonly pid?: number;
  readonly stderr: StderrRing;

  readonly #parts: ConnectionParts;
  #state: State = 'open';
  #closeReason?: Error;
  #closing?: Promise<void>;
  /** The modern era's notification stream (list changes, resource updates); none on legacy. */
  readonly #listen?: ModernListen;

  constructor(parts: ConnectionParts) {
    this.#parts = parts;
    this.name = parts.name;
    this.transport = parts.kind;
    this.era = parts.client.getProtocolEra() ?? 'legacy';
    this.protocolVersion = parts.client.getNegotiatedProtocolVersion();
    this.verdict = parts.verdict;
    this.verdictFromCache = parts.fromCache;
    this.stderr = parts.stderr;
    this.serverInfo = parts.client.getServerVersion();
    this.instructions = parts.client.getInstructions() || undefined;
    this.capabilities = parts.client.getServerCapabilities();
    if (parts.transport instanceof StdioProcessTransport) this.pid = parts.transport.pid;
    parts.client.onclose = () => this.#onTransportClosed();
    if (this.era === 'modern') {
      completeMissingResultType(parts.transport);
      const caps = this.capabilities;
      this.#listen = new ModernListen(
        parts.client,
        {
          toolsListChanged: caps?.tools?.listChanged === true,
          promptsListChanged: caps?.prompts?.listChanged === true,
          resourcesListChanged: caps?.resources?.listChanged === true,
        },
        (err) => {
          if (this.#state === 'open') parts.transportErrors.emit(err);
        },
        parts.logger,
        parts.clock,
      );
      this.#listen.start();
    }
  }

  async listTools(opts: ListToolsOptions = {}): Promise<ToolListing> {
    // client.request rather than client.listTools: the latter resets its output-schema cache on
    // every page, and we pass results through unvalidated anyway (see callTool).
    return this.#bounded(opts, 'UPSTREAM_CONNECT_TIMEOUT', 'tools/list', (signal) =>
      collectToolPages((cursor) => this.#parts.client.request({ method: 'tools/list', params: listParams(cursor, opts.meta) }, ToolPageResult, { signal, timeout: MAX_TIMER_MS })),
    );
  }

  async callTool(name: string, args: Record<string, unknown> | undefined, opts: CallToolOptions = {}): Promise<CallToolResult> {
    const timeoutMs = opts.timeoutMs ?? this.#parts.callTimeoutMs;
    const params = args === undefined ? { name } : { name, arguments: args };
    try {
      // client.request rather than client.callTool: results pass through unchanged (SPEC §7),
      // so no client-side outputSchema validation.
      return (await this.#request('tools/call', params, opts, timeoutMs)) as CallToolResult;
    } catch (err) {
      const timedOut = err instanceof sdk().SdkError && err.code === sdk().SdkErrorCode.RequestTimeout;
      throw await this.#requestError(err, opts.signal, timedOut, 'TOOL_CALL_TIMEOUT', `Tool "${name}" timed out after ${timeoutMs} ms`);
    }
  }

  async ping(opts: RequestOptions = {}): Promise<void> {
    await this.#bounded(opts, 'UPSTREAM_PING_TIMEOUT', 'ping', async (signal) => {
      // The modern era has no ping: a `server/discover` is its cheapest proof of life.
      const options = { signal, timeout: MAX_TIMER_MS };
      if (this.era === 'modern') await this.#parts.client.discover(options);
      else await this.#parts.client.ping(options);
    });
  }

  onClose(listener: (reason: Error) => void): () => void {
    return this.#parts.closed.add(listener);
  }

  onToolsListChanged(listener: () => void): () => void {
    return this.#parts.toolsListChanged.add(listener);
  }

  onTransportError(listener: (err: Error) => void): () => void {
    return this.#parts.transportErrors.add(listener);
  }

  onNotification(method: RelayedNotification, listener: (params: Record<string, unknown>) => void): () => void {
    return this.#parts.traffic.on(method, listener);
  }

  routeAgentRequests(handler: AgentRequestHandler): () => void {
    return this.#parts.traffic.route(handler);
  }

  async list<K extends ListKind>(kind: K, opts: RequestOptions = {}): Promise<Listing<ListItem<K>>> {
    const { method, key } = LIST_METHODS[kind];
    return this.#bounded(opts, 'UPSTREAM_CONNECT_TIMEOUT', method, (signal) =>
      collectPages<typeof key, ListItem<K>>(method, key, (cursor) =>
        this.#parts.client.request(
          { method, params: cursor === undefined ? undefined : { cursor } },
          PassThroughResult as StandardSchemaV1<unknown, Page<typeof key, ListItem<K>>>,
          { signal, timeout: MAX_TIMER_MS },
        ),
      ),
    );
  }

  /**
   * A request of our own (a list, a ping) under one deadline: the server's connect timeout unless
   * `opts` says otherwise; past it, `code` with "`what` timed out".
   */
  async #bounded<T>(opts: RequestOptions, code: SwitchboardErrorCode, what: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    this.#assertOpen();
    const timeoutMs = opts.timeoutMs ?? this.#parts.timeoutMs;
    const deadline = createDeadline(opts.signal, timeoutMs);
    try {
      return await work(deadline.signal);
    } catch (err) {
      throw await this.#requestError(err, opts.signal, deadline.timedOut, code, `${what} timed out after ${timeoutMs} ms`);
    } finally {
      deadline.dispose();
    }
  }

  async forward(method: string, params: Record<string, unknown> | undefined, opts: CallToolOptions = {}): Promise<Record<string, unknown>> {
    const timeoutMs = opts.timeoutMs ?? this.#parts.callTimeoutMs;
    try {
      return await this.#request(method, params ?? {}, opts, timeoutMs);
    } catch (err) {
      const timedOut = err instanceof sdk().SdkError && err.code === sdk().SdkErrorCode.RequestTimeout;
      throw await this.#requestError(err, opts.signal, timedOut, 'UPSTREAM_TIMEOUT', `${method} timed out after ${timeoutMs} ms`);
    }
  }

  /**
   * One forwarded request, answered as the server answered. The deadline is the SDK's own request
   * timeout because only that one can be reset by progress; asking for progress (a token) is what
   * lets a long request keep itself alive. When it fires, or the signal aborts, the SDK sends
   * notifications/cancelled upstream. In the modern era the server may ask questions first
   * (`input_required`, see input-required.ts).
   */
  async #request(method: string, params: Record<string, unknown>, opts: CallToolOptions, timeoutMs: number): Promise<Record<string, unknown>> {
    this.#assertOpen();
    const link = linkSignal(opts.signal);
    const send = (sent: Record<string, unknown>) =>
      this.#parts.client.request({ method, params: sent }, PassThroughResult, {
        signal: link.signal,
        // Past setTimeout's limit Node fires at once; a longer deadline is no deadline.
        timeout: timeoutMs > 0 ? Math.min(timeoutMs, MAX_TIMER_MS) : MAX_TIMER_MS,
        resetTimeoutOnProgress: true,
        onprogress: opts.onProgress ?? ignoreProgress,
        allowInputRequired: true,
      });
    // The trace context (issue #26) joins whatever `_meta` the request already has.
    if (opts.meta) params = { ...params, _meta: { ...(params._meta as Record<string, unknown> | undefined), ...opts.meta } };
    try {
      if (this.era !== 'modern') return await send(params);
      return await withAnswers(send, params, opts.agent, this.#parts.traffic, link.signal);
    } finally {
      link.dispose();
    }
  }

  async subscribeResource(uri: string, opts: CallToolOptions = {}): Promise<void> {
    if (this.#listen) await this.#listen.subscribe(uri);
    else await this.forward('resources/subscribe', { uri }, opts);
  }

  async unsubscribeResource(uri: string, opts: CallToolOptions = {}): Promise<void> {
    if (this.#listen) await this.#listen.unsubscribe(uri);
    else await this.forward('resources/unsubscribe', { uri }, opts);
  }

  get exitStatus(): ExitStatus | undefined {
    const { transport } = this.#parts;
    return transport instanceof StdioProcessTransport ? transport.exitStatus : undefined;
  }

  close(): Promise<void> {
    return (this.#closing ??= this.#shutdown());
  }

  async #shutdown(): Promise<void> {
    this.#listen?.close();
    if (this.#state === 'open') this.#state = 'closed';
    this.#parts.closed.clear();
    this.#parts.toolsListChanged.clear();
    this.#parts.transportErrors.clear();
    this.#parts.traffic.clear();
    const { client, transport } = this.#parts;
    if (transport instanceof sdk().StreamableHTTPClientTransport) {
      // Let the server free the session; closing the transport below aborts the DELETE if it hangs.
      const deadline = createDeadline(undefined, TERMINATE_SESSION_MS);
      await waitFor(transport.terminateSession(), { signal: deadline.signal }).catch(() => {});
      deadline.dispose();
    }
    await closeClient(client, transport);
    this.#parts.logger?.debug('closed');
  }

  #onTransportClosed(): void {
    if (this.#state !== 'open') return;
    this.#state = 'crashed';
    const { transport } = this.#parts;
    const exit = transport instanceof StdioProcessTransport ? transport.exitStatus : undefined;
    // When the transport itself gave up on the server (a message over the size cap), that is the
    // cause; the kill that followed is only its consequence.
    const failure = transport instanceof StdioProcessTransport ? transport.failure : undefined;
    const reason = failure
      ? new SwitchboardError(failure.code, withStderr(`MCP server "${this.name}" ${failure.message}; the connection was closed`, this.stderr))
      : new SwitchboardError('SERVER_CLOSED', withStderr(`MCP server "${this.name}" closed the connection${describeExit(exit)}`, this.stderr));
    this.#closeReason = reason;
    this.#parts.logger?.warn({ exitCode: exit?.code, signal: exit?.signal }, 'connection closed unexpectedly');
    this.#parts.toolsListChanged.clear();
    this.#parts.transportErrors.clear();
    this.#parts.closed.emit(reason);
    this.#parts.closed.clear();
  }

  #assertOpen(): void {
    if (this.#state !== 'open') throw this.#closedError(this.#closeReason);
  }

  #closedError(cause: unknown): SwitchboardError {
    const reason = this.#closeReason;
    if (this.#state === 'crashed' && reason) {
      return new SwitchboardError(reason instanceof SwitchboardError ? reason.code : 'SERVER_CLOSED', reason.message, { cause });
    }
    return new SwitchboardError('SERVER_CLOSED', `The connection to MCP server "${this.name}" is closed`, { cause });
  }

  /**
   * Maps an SDK rejection: caller aborts stay aborts, then closed, then timeout, then an answer
   * that is not MCP; others (the server's own JSON-RPC errors) pass.
   */
  async #requestError(err: unknown, signal: AbortSignal | undefined, timedOut: boolean, code: SwitchboardErrorCode, message: string): Promise<unknown> {
    if (signal?.aborted) return signal.reason;
    // The server wants (another) sign-in: the upstream goes to needs_auth (failure.ts).
    const authError = authErrorOf(err, this.name, this.#parts.unattendedAuth);
    if (authError) return authError;
    // A write to a child that just died fails before its exit is seen; wait (briefly) for the
    // exit so the error names the exit code and stderr instead of a bare "write EPIPE".
    const { transport } = this.#parts;
    if (this.#state === 'open' && transport instanceof StdioProcessTransport && isBrokenPipe(err)) {
      await transport.finishedWithin(BROKEN_PIPE_WAIT_MS);
    }
    if (this.#state !== 'open') return this.#closedError(err);
    if (timedOut) return new SwitchboardError(code, `${message} (MCP server "${this.name}")`, { cause: err });
    if (err instanceof sdk().SdkError && err.code === sdk().SdkErrorCode.ConnectionClosed) return this.#closedError(err);
    if (isNotMcp(err)) return new SwitchboardError('UPSTREAM_PROTOCOL_ERROR', `MCP server "${this.name}" sent something that is not MCP: ${errorMessage(err)}`, { cause: err });
    return err;
  }
}
