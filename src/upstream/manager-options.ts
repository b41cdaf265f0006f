import type { Logger } from 'pino';
import type { ServerSource } from '../config/types.js';
import type { ErrorInfo } from '../errors.js';
import type { ToolCacheStore } from '../store/tool-cache-store.js';
import type { ToolPinStore } from '../store/ports.js';
import type { PinMode } from './catalogue/tool-pins.js';
import { DEFAULT_BACKOFF } from '../util/backoff.js';
import type { Clock } from '../util/clock.js';
import type { PublishEvent } from '../events/daemon-events.js';
import type { OAuthBroker } from './oauth/broker.js';
import type { ConnectOptions, connectToServer } from './transport/client.js';
import type { ProtocolMode } from './transport/protocol-era.js';
import type { InstanceIdentity } from './instance.js';
import type { HealthSettings, ResolveValues } from './server/upstream-host.js';

/** Health settings of the daemon; each server may override the ping interval and deadline. */
export type HealthOptions = Partial<Omit<HealthSettings, 'backoff'>> & { backoff?: Partial<HealthSettings['backoff']> };

export interface ManagerOptions {
  logger?: Logger;
  /** @default a store that caches nothing */
  store?: ToolCacheStore;
  /** How long `connectServers` waits before serving cached tools of slow servers. @default 250 */
  startupGateMs?: number;
  /** @default connectToServer */
  connect?: typeof connectToServer;
  /** @default the config unchanged */
  resolveValues?: ResolveValues;
  /** Passed to every connect (roots, inheritEnv, clientInfo). */
  connectOptions?: Pick<ConnectOptions, 'roots' | 'inheritEnv' | 'sandbox' | 'clientInfo'>;
  /** Where `SWITCHBOARD_MCP_TIMEOUT_MS` is read. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Pings, reconnects and suspension (SPEC §6). @default on, 30 s pings with a 10 s deadline */
  health?: HealthOptions;
  /** Time and timers of the supervision; tests inject a manual clock. @default the system clock */
  clock?: Clock;
  /** Protocol era of servers whose config does not say (SPEC §4). @default "auto" */
  protocol?: ProtocolMode;
  /** Jitter source of the backoff. @default Math.random */
  random?: () => number;
  /**
   * This daemon's instance id and label for loop detection (SPEC §11), asked for when first
   * needed (after the listener is up). @default a random id, labelled "switchboard"
   */
  identity?: () => InstanceIdentity;
  /** Signs http/sse servers in with OAuth (issue #16). @default none: a 401 fails the connect */
  oauth?: OAuthBroker;
  /** Where status and catalogue changes go: the event bus. @default nowhere */
  publish?: PublishEvent;
  /** The pinned tool definitions (issue #22). @default pins kept in memory */
  pins?: ToolPinStore;
  /** Tool pinning of servers whose config does not say. @default "changes" */
  pinTools?: PinMode;
}

/** A server that could not be started, with why. */
export interface ServerError {
  server: string;
  error: ErrorInfo;
}

export interface ConnectSummary {
  errors: ServerError[];
}

/** Where a server came from when the caller did not say (a server added over the API). */
export const UNKNOWN_SOURCE: ServerSource = { provider: 'api', providerName: 'API', path: '', level: 'native' };

export const DEFAULT_HEALTH: HealthSettings = {
  enabled: true,
  pingIntervalMs: 30_000,
  pingTimeoutMs: 10_000,
  backoff: DEFAULT_BACKOFF,
  crashLimit: 5,
  crashWindowMs: 30_000,
};

/** The daemon's health settings with one server's own ping interval and deadline and traffic limits. */
export function healthFor(
  health: HealthSettings,
  config: { pingIntervalMs?: unknown; pingTimeoutMs?: unknown; maxConcurrentCalls?: unknown; queueSize?: unknown },
): HealthSettings {
  const { pingIntervalMs, pingTimeoutMs, maxConcurrentCalls, queueSize } = config;
  return {
    ...health,
    ...(typeof maxConcurrentCalls === 'number' ? { maxConcurrentCalls } : {}),
    ...(typeof queueSize === 'number' ? { queueSize } : {}),
    ...(typeof pingIntervalMs === 'number' ? { pingIntervalMs } : {}),
    ...(typeof pingTimeoutMs === 'number' ? { pingTimeoutMs } : {}),
  };
}
