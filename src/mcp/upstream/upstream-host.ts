import type { Tool } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import { SwitchboardError, type ErrorInfo } from '../../errors.js';
import type { StoredVerdict, ToolCacheStore } from '../../store/tool-cache-store.js';
import type { BackoffPolicy } from '../../util/backoff.js';
import type { Clock } from '../../util/clock.js';
import type { OAuthBroker } from '../oauth/broker.js';
import { resolveConnectTimeout, type ConnectOptions, type connectToServer, type ServerConnection } from '../transport/client.js';
import type { ServerStatus, ToolsChangedCause } from '../events.js';
import { INSTANCE_META_KEY, findLoop, parseInstanceAd, type InstanceIdentity } from './instance.js';
import type { CallerChannel } from '../forwarding/caller.js';
import type { ListKind } from '../transport/connection.js';
import type { ToolListing } from '../transport/list-tools.js';
import { listOthers, type OtherLists } from '../transport/other-lists.js';
import { sameVerdict, type EraVerdict, type ProtocolMode } from '../transport/protocol-era.js';
import type { Upstream } from './upstream.js';

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
}

/** What an upstream needs from the manager that owns it. */
export interface UpstreamHost {
  readonly log: Logger;
  readonly clock: Clock;
  readonly random: () => number;
  /**
   * Resolves values and opens the connection (spawn or HTTP, then the era's handshake), on the
   * cached era verdict unless told to ignore it.
   */
  connect(upstream: Upstream, signal: AbortSignal, options?: { ignoreCachedVerdict?: boolean }): Promise<ServerConnection>;
  /** Forgets the cached era verdict: it proved wrong. */
  dropVerdict(upstream: Upstream): void;
  /** `tools/list`, checked for loops (throws `LOOP_DETECTED`). */
  list(upstream: Upstream, connection: ServerConnection, signal?: AbortSignal): Promise<ToolListing>;
  /** A fresh listing: into the catalogue and the cache. */
  listed(upstream: Upstream, listing: ToolListing, cause: ToolsChangedCause): void;
  /** Prompts, resources and templates (every kind the server has, or `kinds`). */
  listOthers(upstream: Upstream, connection: ServerConnection, signal?: AbortSignal, kinds?: readonly ListKind[]): Promise<Partial<OtherLists>>;
  /** Fresh prompts / resources / templates: into their catalogues. */
  setOthers(upstream: Upstream, lists: Partial<OtherLists>, cause: ToolsChangedCause): void;
  /** `notifications/resources/updated` of a resource someone subscribed to. */
  resourceUpdated(upstream: Upstream, uri: string): void;
  /** `notifications/message`: to the agents whose calls are in progress on the server, else to everyone listening. */
  logMessage(upstream: Upstream, params: Record<string, unknown>, callers: readonly CallerChannel[]): void;
  /** The tools cached for this config, if any (served while the server waits for a sign-in). */
  cachedTools(upstream: Upstream): Tool[] | undefined;
  /** The server's tools (`[]` drops them) with their flags, emitting the change. */
  setTools(upstream: Upstream, tools: Tool[], flags: { cause: ToolsChangedCause; deferred: boolean; stale: boolean }): void;
  /** A status transition, to be logged and emitted. */
  statusChanged(upstream: Upstream, previous: ServerStatus): void;
}

/** One connect + first list, as the startup gate sees it. */
export interface ConnectTask {
  upstream: Upstream;
  /** Settles when the attempt finished and its outcome was applied. */
  done: Promise<void>;
  outcome?: { ok: true } | { ok: false; error: ErrorInfo };
}

/** How long a cached "legacy" era verdict is trusted before the server is probed again. */
const LEGACY_VERDICT_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

/** Resolves `!cmd` values and credentials on a copy of a config just before connecting. */
export type ResolveValues = (name: string, config: Upstream['config'], source: Upstream['source']) => Promise<Upstream['config']>;

export interface HostDeps {
  log: Logger;
  clock: Clock;
  random: () => number;
  store: ToolCacheStore;
  env: NodeJS.ProcessEnv;
  connect: typeof connectToServer;
  resolveValues: ResolveValues;
  connectOptions: Pick<ConnectOptions, 'roots' | 'inheritEnv' | 'clientInfo'> | undefined;
  /** The daemon-wide protocol era, for servers whose config does not say. */
  protocol: ProtocolMode;
  identity: () => InstanceIdentity;
  /** Signs http/sse servers in with OAuth; without it a 401 is a plain connect failure. */
  oauth: OAuthBroker | undefined;
  setTools: UpstreamHost['setTools'];
  statusChanged: UpstreamHost['statusChanged'];
  setOthers: UpstreamHost['setOthers'];
  resourceUpdated: UpstreamHost['resourceUpdated'];
  logMessage: UpstreamHost['logMessage'];
}

/**
 * The manager's side of every upstream: how it connects (values resolved, the era verdict
 * cached per config — in memory for this process and in the store for the next), how it lists
 * (introducing this daemon, refusing a loop) and where a listing goes (catalogue and cache).
 */
export function createUpstreamHost(deps: HostDeps): UpstreamHost {
  const verdicts = new VerdictCache(deps.store, deps.clock);
  return {
    log: deps.log,
    clock: deps.clock,
    random: deps.random,
    async connect(upstream, signal, options = {}) {
      const resolved = await deps.resolveValues(upstream.name, upstream.config, upstream.source);
      const protocol = upstream.config.protocol ?? deps.protocol;
      const cached = options.ignoreCachedVerdict || protocol === 'legacy' ? undefined : verdicts.get(upstream);
      // Decided on the resolved config: an Authorization header (written, `!cmd` or stored) wins.
      const authProvider = deps.oauth?.providerFor(upstream.name, resolved);
      const connection = await deps.connect(upstream.name, resolved, {
        ...(authProvider ? { authProvider } : {}),
        ...deps.connectOptions,
        signal,
        timeoutMs: resolveConnectTimeout(resolved, deps.env),
        logger: deps.log.child({ server: upstream.name }),
        protocol,
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
    listOthers: (upstream, connection, signal, kinds) =>
      listOthers(connection, {
        timeoutMs: resolveConnectTimeout(upstream.config, deps.env),
        log: deps.log,
        ...(signal ? { signal } : {}),
        ...(kinds ? { kinds } : {}),
      }),
    setOthers: deps.setOthers,
    resourceUpdated: deps.resourceUpdated,
    logMessage: deps.logMessage,
    listed(upstream, listing, cause) {
      upstream.instance = parseInstanceAd(listing.meta);
      upstream.hints = listing.hints;
      deps.setTools(upstream, listing.tools, { cause, deferred: false, stale: false });
      deps.store.put(upstream.name, upstream.configHash, listing.tools, listing.hints);
    },
    cachedTools: (upstream) => deps.store.get(upstream.name, upstream.configHash)?.tools,
    setTools: deps.setTools,
    statusChanged: deps.statusChanged,
  };
}

/**
 * Throws `LOOP_DETECTED` when the listing comes from a Switchboard that leads back here and this
 * daemon is the one to break that cycle (see instance.ts). Otherwise the link stays; any tool
 * of ours it carries is dropped by the manager's `setTools`.
 */
function refuseLoop(deps: Pick<HostDeps, 'identity' | 'log'>, upstream: Upstream, listing: ToolListing): void {
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
  ) {}

  get(upstream: Upstream): EraVerdict | undefined {
    const kept = this.kept.get(upstream.name);
    const stored = kept?.configHash === upstream.configHash ? kept : this.store.getVerdict(upstream.name, upstream.configHash);
    if (!stored) return undefined;
    if (stored.verdict.kind === 'legacy' && this.clock.now() - stored.probedAt > LEGACY_VERDICT_MAX_AGE_MS) return undefined;
    return stored.verdict as EraVerdict;
  }

  put(upstream: Upstream, verdict: EraVerdict): void {
    const stored = verdict as StoredVerdict['verdict'];
    this.kept.set(upstream.name, { configHash: upstream.configHash, verdict: stored, probedAt: this.clock.now() });
    this.store.putVerdict(upstream.name, upstream.configHash, stored);
  }

  drop(upstream: Upstream): void {
    this.kept.delete(upstream.name);
    this.store.deleteVerdict(upstream.name);
  }
}
