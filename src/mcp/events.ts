import type { ErrorInfo } from '../errors.js';

/**
 * Every event the manager emits, as one discriminated union. The WebSocket feed sends exactly
 * these objects with `seq` and `ts` added, so this file is also the wire contract of `/events`.
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

export interface ReloadStartedEvent {
  type: 'reload.started';
  /** `null` for a full reload, else the server name. */
  server: string | null;
}

export interface ReloadFinishedEvent {
  type: 'reload.finished';
  server: string | null;
  ok: boolean;
  error?: string;
}

export type ManagerEvent = ServerStatusEvent | ToolsChangedEvent | ReloadStartedEvent | ReloadFinishedEvent;
export type ManagerEventType = ManagerEvent['type'];
