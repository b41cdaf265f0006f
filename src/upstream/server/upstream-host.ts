import type { Tool } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import { errorMessage, SwitchboardError } from '../../errors.js';
import type { StoredVerdict, ToolCacheStore } from '../../store/ports.js';
import type { BackoffPolicy } from '../../util/backoff.js';
import type { Clock } from '../../util/clock.js';
import type { OAuthBroker } from '../oauth/broker.js';
import { resolveConnectTimeout, type ConnectOptions, type connectToServer, type ServerConnection } from '../transport/client.js';
import type { ServerConfig, ServerSource } from '../../config/types.js';
import type { ErrorInfo } from '../../errors.js';
import type { ServerStatus, ToolsChangedCause } from '../../events/daemon-events.js';
import { INSTANCE_META_KEY, findLoop, parseInstanceAd, type InstanceIdentity } from '../instance.js';
import type { CallerChannel } from '../transport/caller.js';
import type { ListKind } from '../transport/connection.js';
import type { ToolListing } from '../transport/list-tools.js';
import { listOthers, type OtherLists } from '../transport/other-lists.js';
import { sameVerdict, type EraVerdict, type ProtocolMode } from '../transport/protocol-era.js';
import type { Throttle } from '../transport/retry-after.js';
import type { CachedLists } from './cached-lists.js';

/** Health pings, reconnects and crash-loop suspension (SPEC §6), resolved for one server. */
export interface HealthSettings {
  /** Pings and reconnects at all; off, a lost server stays `disconnected`. @default true */
  enabled: boolean;
  /** Time between pings while connected; 0 disables pings. @default 30000 */
  pingIntervalMs: number;
  /** How long a ping may take before the server counts as frozen. @default 10000 */
  pingTimeoutMs: number;
  backoff: BackoffPolicy;
  /** More crashes than this within `crashWindowMs` suspend the server. @default 5 */
  crashLimit: number;
  /** @default 30000 */
  crashWindowMs: number;
  /**
   * A fixed cap of requests (calls, prompt gets, reads, completions) running on the server at once
   * (issue #26). @default undefined: the adaptive limit (issue #35)
   */
  maxConcurrentCalls?: number | undefined;
  /**
   * A fixed bound of requests waiting for a slot; beyond it, `SERVER_BUSY`. @default undefined:
   * bounded by each request's deadline, and 10 000
   */
  queueSize?: number | undefined;
}

/** Who an upstream is: what its host needs to connect and list it. */
export interface UpstreamIdentity {
  readonly name: string;
  /** The config as discovery gave it (unresolved: no `!cmd` output in it). */
  readonly config: ServerConfig;
  readonly configHash: string;
  readonly source: ServerSource;
  /** The server's pause (429/503 with `Retry-After`, issue #26), kept by its every connection. */
  readonly throttle?: Throttle;
}

/** A status transition of one server, as the state machine made it. */
export interface StatusChange {
  server: string;
  status: ServerStatus;
  previous: ServerStatus;
  error: ErrorInfo | undefined;
  attempt: number;
  nextRetryAt: number | undefined;
  restarts: number;
}

/**
 * Where an upstream's lists and news go: the catalogues keep each server's share (tools with
 * their deferred / stale marks, prompts, resources, caching hints); the manager logs and emits.
 * The upstream never holds a list itself.
 */
export interface UpstreamSink {
  /** A fresh tool listing: into the catalogue (and, by the host, the cache). */
  listed(upstream: UpstreamIdentity, listing: ToolListing, cause: ToolsChangedCause): void;
  /** Fresh prompts / resources / templates: into their catalogues. */
  setOthers(upstream: UpstreamIdentity, lists: Partial<OtherLists>, cause: ToolsChangedCause): void;
  /** The connection is gone: its last known tools stay listed, marked stale. */
  markStale(upstream: UpstreamIdentity): void;
  /** The server's tools are dropped (a failed connect, a loop). */
  dropTools(upstream: UpstreamIdentity, cause: ToolsChangedCause): void;
  /** Waiting for a sign-in: the last known tools, else the cached ones, stay listed as deferred. */
  holdForSignIn(upstream: UpstreamIdentity, cause: ToolsChangedCause, cached: Tool[] | undefined): void;
  /** `notifications/resources/updated` of a resource someone subscribed to. */
  resourceUpdated(upstream: UpstreamIdentity, uri: string): void;
  /** `notifications/message`: to the agents whose calls are in progress on the server, else to everyone listening. */
  logMessage(upstream: UpstreamIdentity, params: Record<string, unknown>, callers: readonly CallerChannel[]): void;
  /** A status transition, to be logged and emitted. */
  statusChanged(change: StatusChange): void;
}

/** What an upstream needs from the manager that owns it. */
export interface UpstreamHost extends Omit<UpstreamSink, 'holdForSignIn'> {
  readonly log: Logger;
  readonly clock: Clock;
  readonly random: () => number;
  /** The daemon-wide protocol era, for servers whose config does not say. */
  readonly protocol: ProtocolMode;
  /**
   * Resolves values and opens the connection (spawn or HTTP, then the era's handshake), on the
   * cached era verdict unless told to ignore it. `companion`: a 2025-era connection beside the
   * live one (era-companion.ts): no probe, no verdict kept, its own log bindings.
   */
  connect(upstream: UpstreamIdentity, signal: AbortSignal, options?: { ignoreCachedVerdict?: boolean; companion?: boolean }): Promise<ServerConnection>;
  /** Forgets the cached era verdict: it proved wrong. */
  dropVerdict(upstream: UpstreamIdentity): void;
  /** `tools/list`, checked for loops (throws `LOOP_DETECTED`). */
  list(upstream: UpstreamIdentity, connection: ServerConnection, signal?: AbortSignal): Promise<ToolListing>;
  /** Prompts, resources and templates (every kind the server has, or `kinds`). */
  listOthers(upstream: UpstreamIdentity, connection: ServerConnection, signal?: AbortSignal, kinds?: readonly ListKind[]): Promise<Partial<OtherLists>>;
  /** Waiting for a sign-in: the last known (or cached) tools stay listed as deferred. */
  holdForSignIn(upstream: UpstreamIdentity, cause: ToolsChangedCause): void;
}

/** One connect + first list, as the startup gate sees it. */
export interface ConnectTask {
  /** The server being connected. */
  upstream: UpstreamIdentity;
  /** Settles when the attempt finished and its outcome was applied. */
  done: Promise<void>;
  outcome?: { ok: true } | { ok: false; error: ErrorInfo };
}

/** How long a cached "legacy" era verdict is trusted before the server is probed again. */
const LEGACY_VERDICT_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

/** Resolves `!cmd` values and credentials on a copy of a config just before connecting. */
export type ResolveValues = (name: string, config: ServerConfig, source: ServerSource) => Promise<ServerConfig>;

export interface HostDeps {
  log: Logger;
  clock: Clock;
  random: () => number;
  store: ToolCacheStore;
  /** The cached tool lists, loaded ahead for the startup gate (the manager's). */
  lists: CachedLists;
  /** Loads a server's tool pins (issue #22) before its first listing is judged. */
  loadPins: (server: string) => Promise<void>;
  env: NodeJS.ProcessEnv;
  connect: typeof connectToServer;
  resolveValues: ResolveValues;
  connectOptions: Pick<ConnectOptions, 'roots' | 'inheritEnv' | 'sandbox' | 'clientInfo'> | undefined;
  /** The daemon-wide protocol era, for servers whose config does not say. */
  protocol: ProtocolMode;
  identity: () => InstanceIdentity;
  /** Signs http/sse servers in with OAuth; without it a 401 is a plain connect failure. */
  oauth: OAuthBroker | undefined;
  /** Where lists and news go (the manager and its catalogues). */
  sink: UpstreamSink;
}

/**
 * The manager's side of every upstream: how it connects (values resolved, the era verdict
 * cached per config — in memory for this process and in the store for the next), how it lists
 * (introducing this daemon, refusing a loop) and where a listing goes (catalogue and cache).
 */
export function createUpstreamHost(deps: HostDeps): UpstreamHost {
  const verdicts = new VerdictCache(deps.store, deps.clock, deps.log);
  return {
    log: deps.log,
    clock: deps.clock,
    random: deps.random,
    protocol: deps.protocol,
    async connect(upstream, signal, options = {}) {
      const protocol = options.companion ? 'legacy' : (upstream.config.protocol ?? deps.protocol);
      // The store answers while values resolve. The cached list is loaded here too, so a server
      // that ends up waiting for a sign-in finds it (`cachedTools`).
      const [resolved, cached] = await Promise.all([
        deps.resolveValues(upstream.name, upstream.config, upstream.source),
        options.ignoreCachedVerdict || protocol === 'legacy' ? undefined : verdicts.get(upstream),
        deps.lists.load(upstream),
        deps.loadPins(upstream.name),
      ]);
      // Decided on the resolved config: an Authorization header (written, `!cmd` or stored) wins.
      const authProvider = deps.oauth?.providerFor(upstream.name, resolved);
      const connection = await deps.connect(upstream.name, resolved, {
        ...(authProvider ? { authProvider } : {}),
        ...(upstream.throttle ? { throttle: upstream.throttle } : {}),
        ...deps.connectOptions,
        signal,
        timeoutMs: resolveConnectTimeout(resolved, deps.env),
        logger: deps.log.child(options.companion ? { server: upstream.name, companion: true } : { server: upstream.name }),
        protocol,
        clock: deps.clock,
        ...(cached ? { verdict: cached } : {}),
      });
      // The probe runs once per config: later connects (a reconnect, a warm start) reuse what it found.
      if (protocol !== 'legacy' && !sameVerdict(cached, connection.verdict)) verdicts.put(upstream, connection.verdict);
      return connection;
    },
    dropVerdict: (upstream) => verdicts.drop(upstream),
    async list(upstream, connection, signal) {
      const { id, label } = deps.identity();
      const listing = await connection.listTools({
        ...(signal ? { signal } : {}),
        timeoutMs: resolveConnectTimeout(upstream.config, deps.env),
        // An upstream Switchboard that is itself still starting answers a Switchboard at once
        // instead of behind its startup gate: two daemons aggregating each other would otherwise
        // each wait for the other's gate until their connect timeouts.
        meta: { [INSTANCE_META_KEY]: { id, label } },
      });
      refuseLoop(deps, upstream, listing);
      return listing;
    },
    listOthers(upstream, connection, signal, kinds) {
      const { throttle } = upstream;
      return listOthers(connection, {
        timeoutMs: resolveConnectTimeout(upstream.config, deps.env),
        log: deps.log,
        ...(signal ? { signal } : {}),
        ...(kinds ? { kinds } : {}),
        ...(throttle ? { paused: () => throttle.remainingMs() > 0 } : {}),
      });
    },
    listed(upstream, listing, cause) {
      deps.sink.listed(upstream, listing, cause);
      deps.lists.save(upstream, listing.tools, listing.hints);
    },
    setOthers: (upstream, lists, cause) => deps.sink.setOthers(upstream, lists, cause),
    markStale: (upstream) => deps.sink.markStale(upstream),
    dropTools: (upstream, cause) => deps.sink.dropTools(upstream, cause),
    holdForSignIn: (upstream, cause) => deps.sink.holdForSignIn(upstream, cause, deps.lists.peek(upstream)?.tools),
    resourceUpdated: (upstream, uri) => deps.sink.resourceUpdated(upstream, uri),
    logMessage: (upstream, params, callers) => deps.sink.logMessage(upstream, params, callers),
    statusChanged: (change) => deps.sink.statusChanged(change),
  };
}

/**
 * Throws `LOOP_DETECTED` when the listing comes from a Switchboard that leads back here and this
 * daemon is the one to break that cycle (see instance.ts). Otherwise the link stays; any tool
 * of ours it carries is dropped by the manager's `setTools`.
 */
function refuseLoop(deps: Pick<HostDeps, 'identity' | 'log'>, upstream: UpstreamIdentity, listing: ToolListing): void {
  const ad = parseInstanceAd(listing.meta);
  const loop = ad && findLoop(deps.identity(), ad);
  if (!loop) return;
  if (loop.refuse) throw new SwitchboardError('LOOP_DETECTED', `Refusing MCP server "${upstream.name}": ${loop.message}`);
  deps.log.debug({ server: upstream.name, loop: loop.message }, 'loop through this server; another Switchboard breaks it');
}

/**
 * Era verdicts per server and config: the ones this process reached (so a reconnect never
 * probes, database or not) over the ones the store kept. A legacy verdict is trusted for a week
 * only: a server upgraded to the modern era still answers `initialize`, so nothing else would
 * ever notice.
 */
class VerdictCache {
  private readonly kept = new Map<string, StoredVerdict & { configHash: string }>();

  constructor(
    private readonly store: ToolCacheStore,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  async get(upstream: UpstreamIdentity): Promise<EraVerdict | undefined> {
    const kept = this.kept.get(upstream.name);
    const stored = kept?.configHash === upstream.configHash ? kept : await this.store.getVerdict(upstream.name, upstream.configHash).catch(() => undefined);
    if (!stored) return undefined;
    if (stored.verdict.kind === 'legacy' && this.clock.now() - stored.probedAt > LEGACY_VERDICT_MAX_AGE_MS) return undefined;
    return stored.verdict as EraVerdict;
  }

  put(upstream: UpstreamIdentity, verdict: EraVerdict): void {
    const stored = verdict as StoredVerdict['verdict'];
    this.kept.set(upstream.name, { configHash: upstream.configHash, verdict: stored, probedAt: this.clock.now() });
    // In the background, best effort: this process goes on with the verdict it keeps.
    void this.store.putVerdict(upstream.name, upstream.configHash, stored).catch((err: unknown) => this.failed(upstream, 'write', err));
  }

  drop(upstream: UpstreamIdentity): void {
    this.kept.delete(upstream.name);
    void this.store.deleteVerdict(upstream.name).catch((err: unknown) => this.failed(upstream, 'delete', err));
  }

  private failed(upstream: UpstreamIdentity, what: string, err: unknown): void {
    this.log.warn({ server: upstream.name, err: errorMessage(err) }, `protocol verdict ${what} failed`);
  }
}
