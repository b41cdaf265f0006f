import { EventEmitter } from 'node:events';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { pino, type Logger } from 'pino';
import type { ServerConfig, ServerSource } from '../config/types.js';
import { validateServerConfig } from '../config/validate.js';
import { errorMessage, SwitchboardError, type ErrorInfo } from '../errors.js';
import { configHash } from '../config/config-hash.js';
import { MemoryStateStore } from '../store/state-store.js';
import { NoopToolCacheStore, type ToolCacheStore } from '../store/tool-cache-store.js';
import { DEFAULT_BACKOFF } from '../util/backoff.js';
import { systemClock, type Clock } from '../util/clock.js';
import { ListenerSet } from '../util/listeners.js';
import { connectToServer, resolveCallTimeout, type ConnectOptions, type ServerConnection } from './transport/client.js';
import type { ManagerEvent, OperationEvent, ServerStatus, ToolsChangedCause } from './events.js';
import { buildInstanceAd, loadInstanceIdentity, type InstanceAd, type InstanceIdentity } from './upstream/instance.js';
import type { OAuthBroker } from './oauth/broker.js';
import type { ProtocolMode } from './transport/protocol-era.js';
import { detailOf, snapshotOf, type ServerDetail, type ServerSnapshot } from './upstream/server-snapshot.js';
import { passStartupGate } from './upstream/startup-gate.js';
import { callThroughUpstream, type ToolCallOptions } from './forwarding/tool-call.js';
import { aggregateCapabilities, aggregateListHints, type AggregateCapabilities, type ListHintsAggregate } from './catalogue/aggregate.js';
import { agentOptionsOf, type CallerChannel } from './forwarding/caller.js';
import { Catalogues } from './catalogue/catalogues.js';
import { Forwarding } from './forwarding/forwarding.js';
import type { ToolCatalogue } from './catalogue/tool-catalogue.js';
import { Upstream } from './upstream/upstream.js';
import { createUpstreamHost, type ConnectTask, type HealthSettings, type ResolveValues, type UpstreamHost } from './upstream/upstream-host.js';

export type { ResolveValues } from './upstream/upstream-host.js';
export type { AggregateCapabilities } from './catalogue/aggregate.js';

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
  connectOptions?: Pick<ConnectOptions, 'roots' | 'inheritEnv' | 'clientInfo'>;
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
}

export interface ServerError {
  server: string;
  error: ErrorInfo;
}

export interface ConnectSummary {
  errors: ServerError[];
}

export const DEFAULT_HEALTH: HealthSettings = {
  enabled: true,
  pingIntervalMs: 30_000,
  pingTimeoutMs: 10_000,
  backoff: DEFAULT_BACKOFF,
  crashLimit: 5,
  crashWindowMs: 30_000,
};

const UNKNOWN_SOURCE: ServerSource = { provider: 'api', providerName: 'API', path: '', level: 'native' };

/**
 * Owns the set of upstream servers and the aggregated catalogue: connects them in parallel
 * behind the startup gate, routes calls, and turns each server's changes into events. What
 * happens to one server over time — reconnects, pings, suspension — is its `Upstream`'s business.
 */
export class MCPManager {
  private readonly servers = new Map<string, Upstream>();
  private readonly emitter = new EventEmitter();
  private readonly catalogues: Catalogues;
  /** Prompts, resources, completions, subscriptions and log levels, routed to their servers. */
  readonly forwarding: Forwarding;
  private readonly traffic = new ListenerSet<[ServerTrafficEvent]>((err) => this.log.error({ err: errorMessage(err) }, 'traffic listener threw'));
  private readonly log: Logger;
  private readonly store: ToolCacheStore;
  private readonly startupGateMs: number;
  private readonly env: NodeJS.ProcessEnv;
  private readonly clock: Clock;
  private readonly health: HealthSettings;
  private readonly host: UpstreamHost;
  private readonly identityFn: () => InstanceIdentity;
  private identityValue: InstanceIdentity | undefined;

  constructor(private readonly options: ManagerOptions = {}) {
    this.log = options.logger ?? pino({ level: 'silent' });
    this.store = options.store ?? new NoopToolCacheStore();
    this.startupGateMs = options.startupGateMs ?? 250;
    this.env = options.env ?? process.env;
    this.clock = options.clock ?? systemClock;
    this.health = { ...DEFAULT_HEALTH, ...options.health, backoff: { ...DEFAULT_BACKOFF, ...options.health?.backoff } };
    this.identityFn = options.identity ?? (() => loadInstanceIdentity(new MemoryStateStore(), undefined, 'switchboard'));
    // Subscribers are the WebSocket feed and tests; a listener count warning would be noise.
    this.emitter.setMaxListeners(0);
    this.catalogues = new Catalogues(
      (event) => this.emit(event),
      () => this.identity.id,
      (name) => this.servers.get(name),
      (kind) => this.traffic.emit({ type: 'list.changed', kind }),
    );
    this.forwarding = new Forwarding(this.catalogues, (name) => this.servers.get(name), () => this.servers.values(), this.log);
    this.host = createUpstreamHost({
      log: this.log,
      clock: this.clock,
      random: options.random ?? Math.random,
      store: this.store,
      env: this.env,
      connect: options.connect ?? connectToServer,
      resolveValues: options.resolveValues ?? ((_name, config) => Promise.resolve(config)),
      connectOptions: options.connectOptions,
      protocol: options.protocol ?? 'auto',
      identity: () => this.identity,
      oauth: options.oauth,
      setTools: (upstream, tools, flags) => this.catalogues.setTools(upstream, tools, flags),
      setOthers: (upstream, lists, cause) => this.catalogues.setOthers(upstream, lists, cause),
      statusChanged: (upstream, previous) => this.statusChanged(upstream, previous),
      resourceUpdated: (upstream, uri) => this.traffic.emit({ type: 'resource.updated', server: upstream.name, uri }),
      logMessage: (upstream, params, callers) => {
        upstream.logMessages.push(params);
        // A message sent while agents' calls run goes to those agents; any other is everyone's.
        if (callers.length > 0) for (const caller of callers) caller.log(upstream.name, params);
        else this.traffic.emit({ type: 'log', server: upstream.name, params });
      },
    });
  }

  /** Every event, in emission order. Returns the unsubscribe function. */
  subscribe(listener: (event: ManagerEvent) => void): () => void {
    this.emitter.on('event', listener);
    return () => this.emitter.off('event', listener);
  }

  getConnectionStatus(name: string): ServerStatus {
    return this.servers.get(name)?.status ?? 'disconnected';
  }

  hasServer(name: string): boolean {
    return this.servers.has(name);
  }

  listServers(): ServerSnapshot[] {
    return [...this.servers.values()].map(snapshotOf).sort((a, b) => a.name.localeCompare(b.name));
  }

  getServer(name: string): ServerDetail | undefined {
    const upstream = this.servers.get(name);
    return upstream && detailOf(upstream, this.catalogues.tools.namesOf(name), this.catalogues.prompts.namesOf(name), this.options.oauth?.signInOffer(name, upstream.config));
  }

  /** The server's config as discovery gave it (unresolved: no `!cmd` output in it). */
  serverConfig(name: string): ServerConfig | undefined {
    return this.servers.get(name)?.config;
  }

  /**
   * A person signed in to `name`: a server waiting for that connects again now. Returns whether
   * one was resumed; a server in any other state picks the new tokens up on its next request.
   */
  resumeAfterSignIn(name: string): boolean {
    return this.servers.get(name)?.resumeAfterSignIn() !== undefined;
  }

  /** The aggregated catalogue; `version` changes on every change of any server's tools. */
  getCatalogue(): ToolCatalogue {
    return this.catalogues.tools;
  }

  getTools(): ReturnType<ToolCatalogue['list']> {
    return this.catalogues.tools.list();
  }

  /** The aggregated prompts and resources (SPEC §7). */
  getPrompts(): Catalogues['prompts'] {
    return this.catalogues.prompts;
  }

  getResources(): Catalogues['resources'] {
    return this.catalogues.resources;
  }

  /** What the connected servers can do, together: the capabilities `/mcp` advertises. */
  capabilities(): AggregateCapabilities {
    return aggregateCapabilities(this.servers.values());
  }

  /** Resource updates and log messages no call in progress claimed, for `/mcp` sessions to relay. */
  onServerTraffic(listener: (event: ServerTrafficEvent) => void): () => void {
    return this.traffic.add(listener);
  }

  /** Who this daemon is, for loop detection; fixed once first asked. */
  get identity(): InstanceIdentity {
    return (this.identityValue ??= this.identityFn());
  }

  /** What `/mcp` advertises: this daemon over every connected Switchboard it aggregates. */
  instanceAd(): InstanceAd {
    const upstreams: InstanceAd[] = [];
    for (const upstream of this.servers.values()) if (upstream.connection && upstream.instance) upstreams.push(upstream.instance);
    return buildInstanceAd(this.identity, upstreams);
  }

  /**
   * Connects every server not already connected or connecting. Resolves after the startup gate:
   * finished servers serve live tools, failed ones are in `errors`, slow ones serve cached tools
   * as deferred — or, without a cache entry, are awaited.
   */
  async connectServers(
    configs: Readonly<Record<string, ServerConfig>>,
    sources: Readonly<Record<string, ServerSource>> = {},
    options: { cause?: ToolsChangedCause } = {},
  ): Promise<ConnectSummary> {
    const cause = options.cause ?? 'startup';
    const phase = { returned: false };
    const errors: ServerError[] = [];
    const tasks: ConnectTask[] = [];

    for (const [name, config] of Object.entries(configs)) {
      const existing = this.servers.get(name);
      if (existing && (existing.status === 'connected' || existing.pending)) continue;
      const upstream = this.replaceUpstream(name, config, sources[name] ?? UNKNOWN_SOURCE, existing);
      const problems = validateServerConfig(name, config);
      if (problems.length > 0) {
        const error: ErrorInfo = { code: 'CONFIG_INVALID', message: problems.join('; ') };
        upstream.fail(error);
        errors.push({ server: name, error });
        continue;
      }
      tasks.push(upstream.start(cause, phase));
    }

    await passStartupGate(tasks, this.startupGateMs, (task) => {
      const cached = this.store.get(task.upstream.name, task.upstream.configHash);
      if (cached) {
        task.upstream.hints = cached.hints;
        this.catalogues.setTools(task.upstream, cached.tools, { cause, deferred: true, stale: false });
      }
      return cached !== undefined;
    });

    phase.returned = true;
    for (const task of tasks) {
      if (task.outcome && !task.outcome.ok) errors.push({ server: task.upstream.name, error: task.outcome.error });
    }
    return { errors };
  }

  /** The live connection, waiting for a connect in flight within `budgetMs` (default: the call timeout). */
  async waitForConnection(name: string, signal?: AbortSignal, budgetMs?: number): Promise<ServerConnection> {
    const upstream = this.servers.get(name);
    if (!upstream) throw new SwitchboardError('SERVER_NOT_FOUND', `No server named "${name}"`);
    return upstream.waitForConnection(signal, budgetMs ?? resolveCallTimeout(upstream.config));
  }

  /**
   * Calls a tool by its exposed name. A tool of a server that is connecting or reconnecting
   * waits for it within the call's own deadline; see `callThroughUpstream` for retries.
   */
  async callTool(
    exposedName: string,
    args: Record<string, unknown> | undefined,
    options: ToolCallOptions & { caller?: CallerChannel } = {},
  ): Promise<CallToolResult> {
    const tool = this.catalogues.tools.get(exposedName);
    const upstream = tool && this.servers.get(tool.server);
    if (!tool || !upstream) throw new SwitchboardError('TOOL_NOT_FOUND', `No tool named "${exposedName}"`);
    const { caller, ...callOptions } = options;
    // While the call runs, the server's sampling / elicitation / roots requests and its log
    // messages go to the agent that made it.
    if (caller) upstream.callers.add(caller);
    try {
      const result = await callThroughUpstream(upstream, tool, args, {
        ...callOptions,
        ...(caller ? { agent: agentOptionsOf(caller) } : {}),
        defaultTimeoutMs: resolveCallTimeout(upstream.config),
        now: () => this.clock.now(),
      });
      this.rememberLinks(result, upstream.name);
      return result;
    } finally {
      if (caller) upstream.callers.delete(caller);
    }
  }

  /** `resource_link` blocks of a result stay readable through Switchboard (SPEC §7). */
  private rememberLinks(result: CallToolResult, server: string): void {
    if (!Array.isArray(result.content)) return;
    for (const block of result.content) {
      if (block.type === 'resource_link' && typeof block.uri === 'string') this.catalogues.resources.rememberLink(block.uri, server);
    }
  }

  /** Resolves once the server has no `tools/list` re-list running or queued. */
  relistSettled(name: string): Promise<void> {
    return this.servers.get(name)?.relistSettled() ?? Promise.resolve();
  }

  /** Closes one server and removes exactly its tools; other servers are untouched. */
  async disconnectServer(name: string): Promise<void> {
    const upstream = this.servers.get(name);
    if (!upstream) throw new SwitchboardError('SERVER_NOT_FOUND', `No server named "${name}"`);
    await upstream.stop();
    this.catalogues.clearServer(upstream, 'disconnect');
    upstream.markDisconnected();
  }

  /** Closes every server (all settle, none blocks another) and clears every registry. */
  async disconnectAll(): Promise<void> {
    const names = [...this.servers.keys()];
    const results = await Promise.allSettled(names.map((name) => this.disconnectServer(name)));
    for (const result of results) {
      if (result.status === 'rejected') this.log.warn({ err: errorMessage(result.reason) }, 'disconnect failed');
    }
    this.servers.clear();
    this.catalogues.clear();
  }

  /**
   * Aborts in-flight connects — every server's, or one — so a teardown never waits on a server
   * that is slow to answer `initialize` (with `timeout: 0`, forever).
   */
  abortConnects(reason: Error, name?: string): void {
    const upstreams = name === undefined ? [...this.servers.values()] : [this.servers.get(name)];
    for (const upstream of upstreams) upstream?.abortConnect(reason);
  }

  /** Forgets a disconnected server entirely (used when a reload finds it gone from config). */
  forgetServer(name: string): void {
    const upstream = this.servers.get(name);
    if (upstream && !upstream.connection && !upstream.pending) this.servers.delete(name);
  }

  /** Emits an operation event (reload.*, config.changed, server.log) on the same ordered stream. */
  emitOperation(event: OperationEvent): void {
    this.emit(event);
  }

  /** A fresh `Upstream` for this config; the tools of the one it replaces stay until replaced. */
  private replaceUpstream(name: string, config: ServerConfig, source: ServerSource, previous: Upstream | undefined): Upstream {
    const init = { name, config, configHash: configHash(config), source, ...(previous ? { previous } : {}) };
    const upstream = new Upstream(init, this.host, this.healthFor(config));
    this.servers.set(name, upstream);
    return upstream;
  }

  private healthFor(config: ServerConfig): HealthSettings {
    const { pingIntervalMs, pingTimeoutMs } = config;
    return {
      ...this.health,
      ...(typeof pingIntervalMs === 'number' ? { pingIntervalMs } : {}),
      ...(typeof pingTimeoutMs === 'number' ? { pingTimeoutMs } : {}),
    };
  }

  /** Caching hints for the aggregated tool list (2026-07-28); see aggregate.ts. */
  listHints(defaultTtlMs: number): ListHintsAggregate {
    return aggregateListHints(this.servers.values(), defaultTtlMs);
  }

  /** Logs and emits a status transition, once each (the upstream changed it). */
  private statusChanged(upstream: Upstream, previous: ServerStatus): void {
    const { status: next, lastError: error } = upstream;
    const log = this.log.child({ server: upstream.name });
    if (next === 'failed') log.warn({ from: previous, code: error?.code, err: error?.message }, 'server failed');
    else if (next === 'needs_auth') log.warn({ from: previous, code: error?.code }, 'server needs a person to sign in (switchboard login)');
    else if (next === 'reconnecting') log.warn({ from: previous, attempt: upstream.attempt, code: error?.code, err: error?.message }, 'server lost; reconnecting');
    else if (next === 'connected' && previous === 'reconnecting') log.info({ restarts: upstream.restarts }, 'server reconnected');
    else log.debug({ from: previous, to: next }, 'status');
    const withError = next === 'failed' || next === 'reconnecting' || next === 'needs_auth' || (next === 'disconnected' && error !== undefined);
    this.emit({
      type: 'server.status',
      server: upstream.name,
      status: next,
      previous,
      ...(withError && error ? { error } : {}),
      ...(next === 'reconnecting' ? { attempt: upstream.attempt } : {}),
      ...(next === 'reconnecting' && upstream.nextRetryAt !== undefined ? { nextRetryAt: new Date(upstream.nextRetryAt).toISOString() } : {}),
      toolCount: upstream.tools.length,
    });
  }

  private emit(event: ManagerEvent): void {
    this.emitter.emit('event', event);
  }
}

/**
 * What servers sent that `/mcp` sessions hear about: a list a server re-listed after saying it
 * changed, an update of a resource, a log message no call in progress claimed.
 */
export type ServerTrafficEvent =
  | { type: 'list.changed'; kind: 'tools' | 'prompts' | 'resources' }
  | { type: 'resource.updated'; server: string; uri: string }
  | { type: 'log'; server: string; params: Record<string, unknown> };
