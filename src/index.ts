/**
 * The public library API (SPEC §10): everything needed to embed the Switchboard runtime in
 * another program, or to build the daemon without its CLI.
 */

import { loadPolicyLanguage } from './config/policy-cel.js';

// Loader facade
export { discoverAndLoadMCPTools, type LoadMCPToolsOptions, type LoadedMCPTools } from './loader.js';
export { SwitchboardRuntime, DISCOVERY_FAILURE_PATH, type LoadError, type ReloadOutcome, type RuntimeState } from './runtime/runtime.js';
// The event stream the composition root (createDaemon, below) builds
export { EventBus, type EventBusOptions, type StampedEvent } from './events/event-bus.js';

// Discovery, config loading and validation
export { discoverMCPServers } from './config/discover.js';
export { loadDaemonConfig, parseDaemonConfig, defaultDbPath, type LoadedDaemonConfig } from './config/load.js';
export { validateServerConfig, resolveTransportKind } from './config/validate.js';
export { createValueResolver, type ValueResolver, type ResolvedServerConfig } from './config/resolve-values.js';
export { DaemonConfigSchema, type DaemonConfig, type DaemonConfigInput } from './config/schema.js';
export { ServerConfigSchema } from './config/server-schema.js';
export type {
  DiscoveryOptions,
  DiscoveryReport,
  DiscoveryResult,
  DiscoveryWarning,
  ServerConfig,
  ServerOutcome,
  ServerSource,
  ShadowedEntry,
  TransportKind,
} from './config/types.js';

// The MCP runtime
export { MCPManager, type ManagerOptions, type ConnectSummary, type ServerError } from './upstream/manager.js';
export { connectToServer, resolveConnectTimeout, resolveCallTimeout, type ConnectOptions, type ServerConnection } from './upstream/transport/client.js';
export { exposedToolName, buildCatalogue, toolErrorResult, type BridgedTool, type ToolNameCollision } from './upstream/catalogue/tool-bridge.js';
export { ToolCatalogue } from './upstream/catalogue/tool-catalogue.js';
export type { ServerSnapshot, ServerDetail } from './upstream/server-snapshot.js';
export type { DaemonEvent, PublishEvent, ServerStatus, ToolsChangedCause } from './events/daemon-events.js';

// Tool cache
export { openToolCache } from './store/open-tool-cache.js';
// Issue #28: the stores on SQLite or PostgreSQL (`store` / SWITCHBOARD_DATABASE_URL); the result
// carries the backend and, for PostgreSQL, the pool, for code that shares the database.
export { openStores, StoreUnavailableError, type OpenedStores, type OpenStoresOptions } from './store/open-stores.js';
export { SqliteToolCacheStore, NoopToolCacheStore } from './store/tool-cache-store.js';
// The store ports a backend implements (every method returns a promise; see store/ports.ts).
export type { ToolCacheStore, CachedToolList, ListHints, StoredVerdict, StateStore, CredentialStore, OAuthStore } from './store/ports.js';
export { configHash } from './config/config-hash.js';

// OAuth upstreams (issue #16): sign-in, and the credentials an embedder stores per server
export { OAuthBroker, type SignInOffer } from './upstream/oauth/broker.js';

// The daemon
export { createDaemon, type Daemon, type DaemonDeps } from './daemon.js';
export { Gateway, type GatewayDeps } from './gateway/index.js';
export { buildApp, buildApp as buildServer } from './http/app.js';
export { ERROR_CATALOGUE, SwitchboardError, type ErrorCode } from './errors.js';

// OpenTelemetry (issue #26): `startTelemetry` loads the SDK and exporters only when configured;
// its `telemetry` goes into `createDaemon(config, { telemetry })`, or bring your own Telemetry.
export { startTelemetry } from './telemetry/start-telemetry.js';
export type { TelemetryHandle } from './telemetry/otel-loader.js';
export type { Telemetry, TraceCarrier } from './telemetry/telemetry.js';

// CEL loads on demand in the CLI (issue #44); the library keeps `DaemonConfigSchema.parse` and
// `parseDaemonConfig` synchronous for a config with `policies`, so it loads CEL up front.
await loadPolicyLanguage();
