import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ServerConfig, ServerSource, TransportKind } from '../config/types.js';
import type { ServerConnection } from './client.js';
import type { ServerStatus } from './events.js';
import type { InstanceAd } from './instance.js';

/**
 * Everything the manager knows about one server, in one record. The status is changed only by
 * `MCPManager.setStatus`, so every transition is logged and emitted exactly once.
 */
export interface ServerRecord {
  readonly name: string;
  /** The unresolved config: what is hashed and cached, never the resolved secrets. */
  config: ServerConfig;
  configHash: string;
  source: ServerSource;
  status: ServerStatus;
  lastError?: string;
  connectedSince?: number;
  connection?: ServerConnection;
  /** The in-flight connect + list, while one runs. */
  pending?: Promise<ServerConnection>;
  /** Aborts the in-flight connect when the server is disconnected or reloaded. */
  abort?: AbortController;
  /** Bumped on every connect attempt and teardown, so a stale completion is ignored. */
  generation: number;
  tools: Tool[];
  /** Tools came from the cache and the server is not connected yet. */
  deferred: boolean;
  /** Last known tools of a server that went away. */
  stale: boolean;
  /** The Switchboard instance tree this server advertised, when it is a Switchboard. */
  instance?: InstanceAd;
  /** Stderr of the last stdio child, kept after it is gone for the server detail. */
  stderrTail: () => string[];
  detach: Array<() => void>;
}

/** The public, read-only view of a server used by `/status`, `/servers` and the CLI. */
export interface ServerSnapshot {
  name: string;
  status: ServerStatus;
  transport: TransportKind;
  source: ServerSource;
  toolCount: number;
  deferred: boolean;
  stale: boolean;
  lastError: string | null;
  connectedSince: string | null;
  serverInfo: { name: string; version: string; title?: string } | null;
}

export interface ServerDetail extends ServerSnapshot {
  tools: string[];
  stderrTail: string[];
}

const NO_STDERR = (): string[] => [];

export function newServerRecord(
  name: string,
  config: ServerConfig,
  configHash: string,
  source: ServerSource,
): ServerRecord {
  return {
    name,
    config,
    configHash,
    source,
    status: 'disconnected',
    generation: 0,
    tools: [],
    deferred: false,
    stale: false,
    stderrTail: NO_STDERR,
    detach: [],
  };
}

export function configuredTransport(config: ServerConfig): TransportKind {
  if (config.type === 'http' || config.type === 'sse' || config.type === 'stdio') return config.type;
  return config.url !== undefined && config.command === undefined ? 'http' : 'stdio';
}

export function snapshotOf(record: ServerRecord): ServerSnapshot {
  const info = record.connection?.serverInfo;
  return {
    name: record.name,
    status: record.status,
    transport: record.connection?.transport ?? configuredTransport(record.config),
    source: record.source,
    toolCount: record.tools.length,
    deferred: record.deferred,
    stale: record.stale,
    lastError: record.lastError ?? null,
    connectedSince: record.connectedSince === undefined ? null : new Date(record.connectedSince).toISOString(),
    serverInfo: info ? { name: info.name, version: info.version, ...(info.title ? { title: info.title } : {}) } : null,
  };
}
