import type { CallToolResult, Progress, Prompt, Resource, ResourceTemplateType as ResourceTemplate, ServerCapabilities } from '@modelcontextprotocol/client';
import type { TransportKind } from '../../config/types.js';
import type { AgentOptions } from './input-required.js';
import type { Listing, ToolListing } from './list-tools.js';
import type { EraVerdict, ProtocolEra } from './protocol-era.js';
import type { AgentRequestHandler, RelayedNotification } from './server-traffic.js';
import type { StderrRing } from './stderr-ring.js';
import type { ExitStatus } from './stdio-transport.js';

/** What the rest of the daemon sees of one live upstream connection (connection.ts implements it). */

export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface ListToolsOptions extends RequestOptions {
  /** Sent as the request's `_meta` (this daemon introduces itself to a Switchboard upstream). */
  meta?: Record<string, unknown>;
}

export interface CallToolOptions extends RequestOptions {
  onProgress?: (progress: Progress) => void;
  /** The agent behind the request (its capabilities, `input_required` handling, answers). */
  agent?: AgentOptions;
  /** Merged into the request's `params._meta` (the trace context, issue #26). */
  meta?: Record<string, string>;
}

/** One live upstream MCP server. */
export interface ServerConnection {
  readonly name: string;
  /** The transport actually used (an `http` server may have fallen back to `sse`). */
  readonly transport: TransportKind;
  /** The protocol era negotiated: `legacy` (2025 revisions, `initialize`) or `modern` (2026-07-28). */
  readonly era: ProtocolEra;
  /** The protocol revision in use, e.g. `2025-11-25` or `2026-07-28`. */
  readonly protocolVersion: string | undefined;
  /** The era verdict to cache for this config. */
  readonly verdict: EraVerdict;
  /** True when the connection was opened on a cached verdict not yet confirmed by a request. */
  readonly verdictFromCache: boolean;
  readonly serverInfo?: { name: string; version: string; title?: string };
  /** What the server says of itself and how to use it (`instructions` of its initialize result). */
  readonly instructions?: string;
  readonly capabilities?: ServerCapabilities;
  /** The stdio child's pid. */
  readonly pid?: number;
  /** How the stdio child ended, once it has. */
  readonly exitStatus?: ExitStatus;
  readonly stderr: StderrRing;
  /** Every tool, following `nextCursor`, with the first page's `_meta`; bounded by the server's connect timeout. */
  listTools(opts?: ListToolsOptions): Promise<ToolListing>;
  /** Bounded by the server's call timeout, which progress notifications reset. */
  callTool(name: string, args: Record<string, unknown> | undefined, opts?: CallToolOptions): Promise<CallToolResult>;
  ping(opts?: RequestOptions): Promise<void>;
  /** Fires once when the transport closes on its own (never after `close()`). */
  onClose(listener: (reason: Error) => void): () => void;
  /** Fires on `notifications/tools/list_changed`. */
  onToolsListChanged(listener: () => void): () => void;
  /** Fires on a transport error that did not close the connection (e.g. a broken event stream). */
  onTransportError(listener: (err: Error) => void): () => void;
  /** Fires on a notification the server sends on its own (log messages, list and resource changes). */
  onNotification(method: RelayedNotification, listener: (params: Record<string, unknown>) => void): () => void;
  /** Installs who answers the server's sampling, elicitation and roots requests. */
  routeAgentRequests(handler: AgentRequestHandler): () => void;
  /** Every prompt, resource or resource template the server lists, following `nextCursor`. */
  list<K extends ListKind>(kind: K, opts?: RequestOptions): Promise<Listing<ListItem<K>>>;
  /**
   * `notifications/resources/updated` for `uri` from now on: `resources/subscribe` in the legacy
   * era, the listen stream's `resourceSubscriptions` in the modern one.
   */
  subscribeResource(uri: string, opts?: CallToolOptions): Promise<void>;
  unsubscribeResource(uri: string, opts?: CallToolOptions): Promise<void>;
  /** Any other request, forwarded as is and answered as is (prompts/get, resources/read, …). */
  forward(method: string, params: Record<string, unknown> | undefined, opts?: CallToolOptions): Promise<Record<string, unknown>>;
  /** Idempotent and joinable: a second call returns the first call's promise. */
  close(): Promise<void>;
}

/** The lists a server keeps besides its tools. */
export type ListKind = 'prompts' | 'resources' | 'resourceTemplates';
export type ListItem<K extends ListKind> = K extends 'prompts' ? Prompt : K extends 'resources' ? Resource : ResourceTemplate;
