import type { ErrorInfo } from '../errors.js';
import type { AuditEntry, AuditKind } from '../store/ports.js';

/**
 * Every event on the event bus (`events/event-bus.ts`), as one discriminated union: the
 * manager's, the runtime's and log forwarding's. The WebSocket feed sends exactly these objects
 * with the bus's `seq` and `ts` added, so this file is also the wire contract of `/events`.
 */

/** `needs_auth`: the server asked for OAuth and waits for a person to sign in (`switchboard login`). */
export const SERVER_STATUSES = ['connecting', 'connected', 'reconnecting', 'disconnected', 'needs_auth', 'failed'] as const;
export type ServerStatus = (typeof SERVER_STATUSES)[number];

export const TOOLS_CHANGED_CAUSES = [
  'startup',
  'background',
  'reload',
  'list_changed',
  'reconnect',
  'disconnect',
  /** An operator approved held tools (issue #22 pinning). */
  'approve',
] as const;
export type ToolsChangedCause = (typeof TOOLS_CHANGED_CAUSES)[number];

export interface ServerStatusEvent {
  type: 'server.status';
  server: string;
  status: ServerStatus;
  previous: ServerStatus;
  /** Why: set on `failed`, `reconnecting` and `needs_auth`, and on `disconnected` after a failure. */
  error?: ErrorInfo;
  /** On `reconnecting`: the attempt scheduled next (1, 2, …). */
  attempt?: number;
  /** On `reconnecting`: when that attempt starts (ISO time). */
  nextRetryAt?: string;
  toolCount: number;
}

export interface ToolsChangedEvent {
  type: 'tools.changed';
  server: string;
  /** Exposed tool names that appeared. */
  added: string[];
  /** Exposed tool names that went away. */
  removed: string[];
  /** This server's tool count after the change. */
  toolCount: number;
  cause: ToolsChangedCause;
  /** True when the tools come from the cache and the server is not connected yet. */
  deferred: boolean;
}

/**
 * Tools of a server changed their definition after they were served and are held (issue #22
 * pinning): not listed, calls refused with `TOOL_CHANGED` until `switchboard tools approve`.
 */
export interface ToolsHeldEvent {
  type: 'tools.held';
  server: string;
  /** The tools newly held: the server's own name, the name served once approved, the fields that changed. */
  tools: Array<{ name: string; exposedName: string; changed: string[] }>;
  /** Every tool of the server held now. */
  heldCount: number;
}

/** A server's prompts changed (exposed names, like tools). */
export interface PromptsChangedEvent {
  type: 'prompts.changed';
  server: string;
  added: string[];
  removed: string[];
  /** This server's prompt count after the change. */
  count: number;
  cause: ToolsChangedCause;
}

/** A server's resources or resource templates changed (URIs and URI templates). */
export interface ResourcesChangedEvent {
  type: 'resources.changed';
  server: string;
  added: string[];
  removed: string[];
  /** This server's resources plus templates after the change. */
  count: number;
  cause: ToolsChangedCause;
}

export interface ReloadStartedEvent extends Follows {
  type: 'reload.started';
  /** `null` for a full reload, else the server name. */
  server: string | null;
  /** A full reload that disconnects everything first (`POST /reload?force=true`). */
  force?: true;
}

export interface ReloadFinishedEvent {
  type: 'reload.finished';
  server: string | null;
  ok: boolean;
  /** When `ok` is false: why (`DISCOVERY_FAILED` when a full reload could not read the configs). */
  error?: ErrorInfo;
}

/**
 * Live config (SPEC §8): a config edit, or `POST /reload`, was applied. Sent once the servers
 * it names are connected (or failed), so a subscriber that then lists tools sees the change.
 */
export interface ConfigChangedEvent {
  type: 'config.changed';
  /** `watch`: a config file changed on disk; `reload`: `POST /reload`. */
  cause: 'watch' | 'reload';
  /** The config files whose change was seen (absolute paths; empty for `reload`). */
  files: string[];
  /** Servers connected because they appeared in the config. */
  added: string[];
  /** Servers disconnected because they went from the config. */
  removed: string[];
  /** Servers reconnected because their config changed. */
  changed: string[];
  /** Servers whose file or entry became invalid: they keep running with their last good config. */
  kept: string[];
}

/**
 * Lines a server wrote to stderr (stdio servers), or log messages it sent
 * (`notifications/message`), batched: at most one event per server per 100 ms.
 */
export interface ServerLogEvent {
  type: 'server.log';
  server: string;
  stream: 'stderr' | 'log';
  lines: string[];
  /** Lines left out of this batch because the server wrote faster than the feed carries. */
  dropped?: number;
}

/**
 * A tool call, prompt get or resource read ended (issue #22 item 4): what the audit log recorded,
 * without argument values or start time. The fields are the store's `AuditEntry` (the store sits
 * below the events), so the record's field list is written once.
 */
export interface CallFinishedEvent extends Omit<AuditEntry, 'ts' | 'transport' | 'kind' | 'arguments'> {
  type: 'call.finished';
  /** Never `operator`: that transport is an operator's own entry (an approval decision), not a request. */
  transport: Exclude<AuditEntry['transport'], 'operator'>;
  kind: Exclude<AuditKind, 'approval' | 'policy'>;
}

/** A call waits for an operator's approval (`requireApproval`, issue #22): what it would run, so the operator can decide. */
export interface ApprovalRequestedEvent {
  type: 'approval.requested';
  /** Pass it to `POST /approvals/:id/approve` or `…/deny`. */
  id: string;
  server: string;
  /** The tool's own name at its server. */
  tool: string;
  /** The tool's exposed name, as the agent called it. */
  name: string;
  /**
   * The call's arguments, as the agent sent them (known secret values masked): only with
   * `audit.arguments: true` (issue #40 item 3); `argumentsDigest` names them either way.
   */
  arguments?: Record<string, unknown>;
  /** sha256 hex of the arguments' canonical JSON: what an approval of this call is bound to. */
  argumentsDigest: string;
  /** The policy rule that asked for the approval; absent when a `requireApproval` glob did. */
  rule?: string;
  /** `held`: the caller's request waits; `input_required`: a 2026-07-28 caller was told to retry once approved. */
  mode: ApprovalMode;
  /** The agent whose key the call carried; absent for the operator's key and without keys. */
  agent?: string;
  /** When the call gives up waiting (`APPROVAL_TIMEOUT`), ISO time. */
  expiresAt: string;
}

/** How a call that needs approval waits: its request held open, or answered `input_required` and retried (issue #40 item 3). */
export type ApprovalMode = 'held' | 'input_required';

/** How a held call's wait ended: `withdrawn` when the agent cancelled or went away, or the daemon shut down. */
export const APPROVAL_OUTCOMES = ['approved', 'denied', 'timeout', 'withdrawn'] as const;
export type ApprovalOutcome = (typeof APPROVAL_OUTCOMES)[number];

export interface ApprovalResolvedEvent {
  type: 'approval.resolved';
  id: string;
  server: string;
  tool: string;
  name: string;
  agent?: string;
  argumentsDigest: string;
  rule?: string;
  outcome: ApprovalOutcome;
  /** "The same call for a while": identical calls (agent, tool, arguments digest) pass without approval until then, ISO time. */
  until?: string;
}

/**
 * In a cluster (issue #28), an owner applying another replica's operator action here (a reload,
 * an approval) says whose it follows: the cluster shows such an event everywhere but never
 * applies it again, so no action echoes between replicas.
 */
export interface Follows {
  follows?: string;
}

export const AGENT_CHANGES = ['added', 'rotated', 'revoked'] as const;
export type AgentChange = (typeof AGENT_CHANGES)[number];

/**
 * The agent registry changed an agent (issue #22): created it with its first key, gave it a new
 * key (every earlier one stopped working) or revoked it. Names only, never a key or its hash.
 */
export interface AgentChangedEvent {
  type: 'agent.changed';
  agent: string;
  change: AgentChange;
}

/**
 * An operator approved held tools (issue #22 pinning): their new definitions are pinned, and
 * served. Each tool by its server's own name and the hash of the definition approved.
 */
export interface PinsChangedEvent extends Follows {
  type: 'pins.changed';
  server: string;
  tools: Array<{ name: string; hash: string }>;
}

/** A person signed in to an OAuth server (issue #16); the tokens are in the store, never here. */
export interface SignedInEvent {
  type: 'oauth.signed_in';
  server: string;
}

/**
 * An operator signed out of an OAuth server (issue #43): its tokens are gone from the store, and
 * every replica reconnects the server without them.
 */
export interface SignedOutEvent {
  type: 'oauth.signed_out';
  server: string;
}

/** Events the parts around the manager publish (the runtime, log forwarding, approvals, the audit log, agents, pins, OAuth). */
export type OperationEvent =
  | ReloadStartedEvent
  | ReloadFinishedEvent
  | ConfigChangedEvent
  | ServerLogEvent
  | ApprovalRequestedEvent
  | ApprovalResolvedEvent
  | CallFinishedEvent
  | AgentChangedEvent
  | PinsChangedEvent
  | SignedInEvent
  | SignedOutEvent;

/** The daemon's event vocabulary: everything that goes on the bus (and, filtered per caller, out on `/events`). */
export type DaemonEvent = ServerStatusEvent | ToolsChangedEvent | ToolsHeldEvent | PromptsChangedEvent | ResourcesChangedEvent | OperationEvent;
export type DaemonEventType = DaemonEvent['type'];

/** Puts an event on the bus; every publisher gets this, not the bus itself. */
export type PublishEvent = (event: DaemonEvent) => void;

/**
 * What servers sent that `/mcp` sessions hear about: a list a server re-listed after saying it
 * changed, an update of a resource, a log message no call in progress claimed.
 */
export type ServerTrafficEvent =
  | { type: 'list.changed'; kind: 'tools' | 'prompts' | 'resources' }
  | { type: 'resource.updated'; server: string; uri: string }
  | { type: 'log'; server: string; params: Record<string, unknown> };
