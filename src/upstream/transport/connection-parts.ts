import type { Client, Transport } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import type { TransportKind } from '../../config/types.js';
import type { Clock } from '../../util/clock.js';
import type { ListenerSet } from '../../util/listeners.js';
import type { EraVerdict } from './protocol-era.js';
import type { ServerTraffic } from './server-traffic.js';
import type { StderrRing } from './stderr-ring.js';

/** What one connection is made of: the SDK client and transport an attempt opened, and its listeners. */
export interface ConnectionParts {
  name: string;
  kind: TransportKind;
  client: Client;
  verdict: EraVerdict;
  fromCache: boolean;
  transport: Transport;
  stderr: StderrRing;
  /** Bounds list and ping; 0 disables. */
  timeoutMs: number;
  /** Bounds a tool call between progress notifications; 0 disables. */
  callTimeoutMs: number;
  toolsListChanged: ListenerSet<[]>;
  transportErrors: ListenerSet<[Error]>;
  traffic: ServerTraffic;
  closed: ListenerSet<[Error]>;
  logger?: Logger;
  /** Times the modern era's subscribe wait. @default the system clock */
  clock?: Clock;
  /** Signed in unattended (client credentials): a refused token is a failure, not a wait for a person. */
  unattendedAuth?: boolean;
}

/** The list request of each kind a server keeps besides its tools, and the key of its items. */
export const LIST_METHODS = {
  prompts: { method: 'prompts/list', key: 'prompts' },
  resources: { method: 'resources/list', key: 'resources' },
  resourceTemplates: { method: 'resources/templates/list', key: 'resourceTemplates' },
} as const;

/** The params of one page of a list: its cursor and the request's `_meta`, when there are any. */
export function listParams(cursor: string | undefined, meta: Record<string, unknown> | undefined): { cursor?: string; _meta?: Record<string, unknown> } | undefined {
  if (cursor === undefined && meta === undefined) return undefined;
  return { ...(cursor !== undefined ? { cursor } : {}), ...(meta !== undefined ? { _meta: meta } : {}) };
}
