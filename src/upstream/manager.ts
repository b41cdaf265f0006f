import { randomUUID } from 'node:crypto';
import { pino, type Logger } from 'pino';
import type { ServerConfig, ServerSource } from '../config/types.js';
import { validateServerConfig } from '../config/validate.js';
import { errorMessage, SwitchboardError } from '../errors.js';
import { configHash } from '../config/config-hash.js';
import type { ToolCacheStore } from '../store/ports.js';
import { NoopToolCacheStore } from '../store/tool-cache-store.js';
import { DEFAULT_BACKOFF } from '../util/backoff.js';
import { systemClock, type Clock } from '../util/clock.js';
import { ListenerSet } from '../util/listeners.js';
import { connectToServer, resolveCallTimeout, type ServerConnection } from './transport/client.js';
import type { DaemonEvent, ServerStatus, ServerTrafficEvent, ToolsChangedCause } from '../events/daemon-events.js';
import { buildInstanceAd, type InstanceAd, type InstanceIdentity } from './instance.js';
import { detailOf, snapshotOf, type ServerDetail, type ServerSnapshot } from './server-snapshot.js';
import { passStartupGate } from './startup-gate.js';
import { aggregateCapabilities, aggregateListHints, type AggregateCapabilities, type ListHintsAggregate } from './catalogue/aggregate.js';
import { Catalogues } from './catalogue/catalogues.js';
import { ToolPins } from './catalogue/tool-pins.js';
import type { ToolCatalogue } from './catalogue/tool-catalogue.js';
import { ToolSearch } from './catalogue/tool-search.js';
import { Upstream } from './server/upstream.js';
import { CachedLists } from './server/cached-lists.js';
import { statusEvent } from './server/status-event.js';
import { createUpstreamHost, type ConnectTask, type HealthSettings, type UpstreamHost } from './server/upstream-host.js';
import { DEFAULT_HEALTH, healthFor, UNKNOWN_SOURCE, type ConnectSummary, type ManagerOptions, type ServerError } from './manager-options.js';

export type { ResolveValues } from './server/upstream-host.js';
export type { AggregateCapabilities } from './catalogue/aggregate.js';
export type { ServerTrafficEvent } from '../events/daemon-events.js';
export { DEFAULT_HEALTH, type ConnectSummary, type HealthOptions, type ManagerOptions, type ServerError } from './manager-options.js';

/**
 * Owns the set of upstream servers and the aggregated catalogue: connects them in parallel
 * behind the startup gate, routes calls, and turns each server's changes into events. What
 * happens to one server over time — reconnects, pings, suspension — is its `Upstream`'s business.
 */
export class MCPManager {
  private readonly servers = new Map<string, Upstream>();
  /** Each server's share of the aggregate and the aggregated catalogues: what the gateway routes agent requests by. */
  readonly catalogues: Catalogues;
  /** Ranked search over the aggregated tools (issue #23): built on the first search, then kept per server. */
  readonly toolSearch: ToolSearch;
  private readonly traffic = new ListenerSet<[ServerTrafficEvent]>((err) => this.log.error({ err: errorMessage(err) }, 'traffic listener threw'));
  private readonly log: Logger;
  private readonly store: ToolCacheStore;
  private readonly cachedLists: CachedLists;
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
    this.cachedLists = new CachedLists(this.store, this.log);
    this.startupGateMs = options.startupGateMs ?? 250;
    this.env = options.env ?? process.env;
    this.clock = options.clock ?? systemClock;
    this.health = { ...DEFAULT_HEALTH, ...options.health, backoff: { ...DEFAULT_BACKOFF, ...options.health?.backoff } };
    this.identityFn = options.identity ?? (() => ({ id: randomUUID(), label: 'switchboard' }));
    this.catalogues = new Catalogues(
      (event) => this.emit(event),
      () => this.identity.id,
      (kind) => {
        // The search index follows the tool list in the background, one server at a time (issue #37).
        if (kind === 'tools') this.toolSearch.schedule();
        this.traffic.emit({ type: 'list.changed', kind });
      },
      new ToolPins({
        ...(options.pins ? { store: options.pins } : {}),
        ...(options.pinTools ? { mode: options.pinTools } : {}),
        log: this.log,
        publish: (event) => this.emit(event),
      }),
    );
    // A server's own words (its title and instructions) are indexed with its tools (issue #37).
    this.toolSearch = new ToolSearch(this.catalogues.tools, (server) => this.aboutServer(server));
    this.host = createUpstreamHost({
      log: this.log,
      clock: this.clock,
      random: options.random ?? Math.random,
      store: this.store,
      lists: this.cachedLists,
      loadPins: (server) => this.catalogues.pins.load(server),
      env: this.env,
      connect: options.connect ?? connectToServer,
      resolveValues: options.resolveValues ?? ((_name, config) => Promise.resolve(config)),
      connectOptions: options.connectOptions,
      protocol: options.protocol ?? 'auto',
      identity: () => this.identity,
      oauth: options.oauth,
      sink: {
        listed: (upstream, listing, cause) => this.catalogues.listed(upstream, listing, cause),
        setOthers: (upstream, lists, cause) => this.catalogues.setOthers(upstream, lists, cause),
        markStale: (upstream) => this.catalogues.markStale(upstream),
        dropTools: (upstream, cause) => this.catalogues.setTools(upstream, [], { cause, deferred: false, stale: false }),
        holdForSignIn: (upstream, cause, cached) => this.catalogues.holdForSignIn(upstream, cause, cached),
        statusChanged: (change) => this.emit(statusEvent(change, this.catalogues.shareOf(change.server).tools.length, this.log)),
        resourceUpdated: (upstream, uri) => this.traffic.emit({ type: 'resource.updated', server: upstream.name, uri }),
        logMessage: (upstream, params, callers) => {
          // A message sent while agents' calls run goes to those agents; any other is everyone's.
          if (callers.length > 0) for (const caller of callers) caller.log(upstream.name, params);
          else this.traffic.emit({ type: 'log', server: upstream.name, params });
        },
      },
    });
  }

  getConnectionStatus(name: string): ServerStatus {
    return this.servers.get(name)?.status ?? 'disconnected';
  }

  hasServer(name: string): boolean {
    return this.servers.has(name);
  }

  listServers(): ServerSnapshot[] {
    return [...this.servers.values()].map((u) => snapshotOf(u, this.catalogues.shareOf(u.name), this.options.connectOptions?.sandbox)).sort((a, b) => a.name.localeCompare(b.name));
  }

  getServer(name: string): ServerDetail | undefined {
    const upstream = this.servers.get(name);
    if (!upstream) return undefined;
    const names = { tools: this.catalogues.tools.namesOf(name), prompts: this.catalogues.prompts.namesOf(name) };
    return detailOf(upstream, this.catalogues.shareOf(name), names, this.options.oauth?.signInOffer(name, upstream.config), this.options.connectOptions?.sandbox);
  }

  /** The server's config as discovery gave it (unresolved: no `!cmd` output in it). */
  serverConfig(name: string): ServerConfig | undefined {
    return this.servers.get(name)?.config;
  }

  /**
   * A person signed in to `name`: a server waiting for that connects again now (returns whether one
   * was); any other picks the tokens up on its next request.
   */
  resumeAfterSignIn(name: string): boolean {
    return this.servers.get(name)?.resumeAfterSignIn() !== undefined;
  }

  /** The aggregated catalogue; `version` changes on every change of any server's tools. */
  getCatalogue(): ToolCatalogue {
    return this.catalogues.tools;
  }

  /** The aggregated tools, sorted by name (a shorthand for `getCatalogue().list()`). */
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
    for (const upstream of this.servers.values()) {
      const instance = this.catalogues.shareOf(upstream.name).instance;
      if (upstream.connection && instance) upstreams.push(instance);
    }
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
        const error = { code: 'CONFIG_INVALID', message: problems.join('; ') } as const;
        upstream.fail(error);
        errors.push({ server: name, error });
        continue;
      }
      tasks.push(upstream.start(cause, phase));
    }

    // Read while the servers connect, so the gate knows what the cache holds when it opens.
    const cachedLists = Promise.all(tasks.flatMap(({ upstream }) => [this.cachedLists.load(upstream), this.catalogues.pins.load(upstream.name)]));
    await passStartupGate(tasks, {
      gateMs: this.startupGateMs,
      clock: this.clock,
      serveCached: (task) => {
        const cached = this.cachedLists.peek(task.upstream);
        if (cached) this.catalogues.servedFromCache(task.upstream, cached.tools, cached.hints, cause);
        return cached !== undefined;
      },
      cacheRead: cachedLists,
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

  /** The server's `Upstream`, where the gateway sends what it routes there. */
  /** What a connected server says of itself: its title and `instructions`, if it says anything. */
  aboutServer(name: string): string | undefined {
    const connection = this.upstream(name)?.connection;
    const about = [connection?.serverInfo?.title, connection?.instructions].filter((text) => typeof text === 'string' && text.trim() !== '').join('. ');
    return about === '' ? undefined : about;
  }

  upstream(name: string): Upstream | undefined {
    return this.servers.get(name);
  }

  /** Every server's `Upstream` (also read by `/metrics` for their traffic, issue #26). */
  upstreams(): IterableIterator<Upstream> {
    return this.servers.values();
  }

  /** Serves the held tools named (all when `tools` is undefined) of server `name`; answers those approved (issue #22). */
  approveTools(name: string, tools?: readonly string[], hashes?: Readonly<Record<string, string>>, follows?: string): string[] {
    const upstream = this.servers.get(name);
    if (!upstream) throw new SwitchboardError('SERVER_NOT_FOUND', `No server named "${name}"`);
    return this.catalogues.approve(upstream, tools, hashes, follows);
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

  /** Aborts in-flight connects (every server's, or one): a teardown never waits on a slow `initialize` (`timeout: 0`: forever). */
  abortConnects(reason: Error, name?: string): void {
    const upstreams = name === undefined ? [...this.servers.values()] : [this.servers.get(name)];
    for (const upstream of upstreams) upstream?.abortConnect(reason);
  }

  /** Forgets a disconnected server entirely (used when a reload finds it gone from config). */
  forgetServer(name: string): void {
    const upstream = this.servers.get(name);
    if (upstream && !upstream.connection && !upstream.pending) {
      this.servers.delete(name);
      this.catalogues.forgetServer(name);
    }
  }

  /** A fresh `Upstream` for this config; the tools of the one it replaces stay until replaced. */
  private replaceUpstream(name: string, config: ServerConfig, source: ServerSource, previous: Upstream | undefined): Upstream {
    const init = { name, config, configHash: configHash(config), source, ...(previous ? { previous } : {}) };
    const upstream = new Upstream(init, this.host, healthFor(this.health, config));
    this.servers.set(name, upstream);
    return upstream;
  }

  /** Caching hints for the aggregated tool list (2026-07-28); see aggregate.ts. */
  listHints(defaultTtlMs: number): ListHintsAggregate {
    return aggregateListHints(this.catalogues.allShares(), defaultTtlMs);
  }

  private emit(event: DaemonEvent): void {
    this.options.publish?.(event);
  }
}
