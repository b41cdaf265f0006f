import { errorMessage } from '../../errors.js';
import { waitFor } from '../../util/wait-for.js';
import type { CallerChannel } from '../transport/caller.js';
import type { ServerConnection } from '../transport/client.js';
import type { BackPressure } from './back-pressure.js';
import { classifyFailure, meansConnectionLost, type FailureKind } from './failure.js';
import { askAgent } from './upstream-traffic.js';
import type { UpstreamHost, UpstreamIdentity } from './upstream-host.js';

/**
 * How an upstream's era companion stands (`GET /servers/:name`): `none` — not wanted (a stdio,
 * SSE or 2025-era server, or a pinned `protocol`); `off` — `eraCompanion: false`; `idle` — wanted,
 * not opened yet (it opens on the first call of a 2025-era agent); `opening`; `open`;
 * `unavailable` — the server would not take a 2025-era connection, so this config uses the live
 * one for good.
 */
export type CompanionState = 'none' | 'off' | 'idle' | 'opening' | 'open' | 'unavailable';

/** The requests during which a server may ask the calling agent something. */
const ROUTED = new Set(['tools/call', 'prompts/get']);

interface Open {
  connection: ServerConnection;
  tools: Set<string>;
  prompts: Set<string>;
  detach: Array<() => void>;
}

/**
 * The era companion of one Streamable HTTP upstream spoken to in 2026-07-28 (issue #21). A
 * dual-era server may ask a client questions (sampling, elicitation, roots) only on its 2025 path;
 * so a 2025-era agent's `tools/call` and `prompts/get` go through a second, 2025-era connection to
 * the same URL (same headers and sign-in), opened on the first such call and shared by every
 * 2025-era agent — when that connection lists the tool or prompt. Its server's questions and log
 * messages go to the agents whose calls run on it, as for a 2025-era upstream. A server that
 * will not take it is tried once per config; after that the live connection serves every call.
 * It closes with the upstream, and with the live connection (the server may have restarted).
 * Opening it and its re-lists wait out a pause the server asked for (issue #35 item 3): the pause
 * is the server's, whichever connection heard of it.
 */
export class EraCompanion {
  #state: 'idle' | 'opening' | 'open' | 'unavailable' = 'idle';
  #opening: Promise<Open | undefined> | undefined;
  #open: Open | undefined;
  #abort = new AbortController();
  readonly #callers = new Set<CallerChannel>();

  constructor(
    private readonly upstream: UpstreamIdentity,
    private readonly host: UpstreamHost,
    private readonly own: { pause: BackPressure; logged: (params: Record<string, unknown>) => void },
  ) {}

  /** For the server's status, given its live connection. */
  state(primary: ServerConnection | undefined): CompanionState {
    if (this.upstream.config.eraCompanion === false) return 'off';
    if (this.#state === 'unavailable') return 'unavailable';
    return primary && this.#wanted(primary) ? this.#state : 'none';
  }

  /**
   * The connection `caller`'s request should take: the companion's, when the request is one of
   * a 2025-era agent the companion can serve; otherwise undefined (the live one). Opens the
   * companion on first need; the caller's abort ends only its own wait.
   */
  async route(primary: ServerConnection, method: string, name: unknown, caller: CallerChannel | undefined, signal: AbortSignal | undefined): Promise<ServerConnection | undefined> {
    if (!this.applies(primary, method, name, caller) || typeof name !== 'string') return undefined;
    const opening = (this.#opening ??= this.#start());
    const open = this.#open ?? (await waitFor(opening, { signal }));
    if (!open) return undefined;
    return (method === 'tools/call' ? open.tools : open.prompts).has(name) ? open.connection : undefined;
  }

  /** Whether `route` could pick the companion: checked first, so every other request stays synchronous. */
  applies(primary: ServerConnection, method: string, name: unknown, caller: CallerChannel | undefined): caller is CallerChannel {
    if (!caller || caller.takesInputRequired || !ROUTED.has(method) || typeof name !== 'string') return false;
    return this.upstream.config.eraCompanion !== false && this.#state !== 'unavailable' && this.#wanted(primary);
  }

  owns(connection: ServerConnection): boolean {
    return this.#open?.connection === connection;
  }

  /** A request on the companion failed: a lost connection is dropped, to be opened again on need. */
  failed(connection: ServerConnection, err: unknown): FailureKind {
    const kind = classifyFailure(err);
    if (meansConnectionLost(kind) || kind === 'auth-required' || kind === 'auth-failed') this.#drop(connection, errorMessage(err));
    return kind;
  }

  /** While a call runs on the companion, its agent is the one the server's questions go to. */
  enter(caller: CallerChannel): () => void {
    this.#callers.add(caller);
    return () => this.#callers.delete(caller);
  }

  /** Closes the companion (the live connection went, or the upstream stops); it may open again later. */
  async close(): Promise<void> {
    this.#abort.abort();
    this.#abort = new AbortController();
    const open = this.#open;
    this.#opening = undefined;
    this.#open = undefined;
    if (this.#state !== 'unavailable') this.#state = 'idle';
    if (!open) return;
    for (const off of open.detach.splice(0)) off();
    await open.connection.close().catch((err: unknown) => this.host.log.debug({ server: this.upstream.name, err: errorMessage(err) }, 'era companion close failed'));
    this.host.log.info({ server: this.upstream.name }, 'era companion closed');
  }

  /** A 2026-07-28 Streamable HTTP connection of an `auto` server. */
  #wanted(primary: ServerConnection): boolean {
    return primary.transport === 'http' && primary.era === 'modern' && (this.upstream.config.protocol ?? this.host.protocol) === 'auto';
  }

  async #start(): Promise<Open | undefined> {
    const { signal } = this.#abort;
    this.#state = 'opening';
    try {
      const open = await this.own.pause.after(() => this.#open2025(signal), signal);
      if (signal.aborted) {
        void open.connection.close();
        throw signal.reason;
      }
      open.detach.push(...this.#wire(open));
      this.#open = open;
      this.#state = 'open';
      this.host.log.info({ server: this.upstream.name, tools: open.tools.size, prompts: open.prompts.size, version: open.connection.protocolVersion }, 'era companion open');
      return open;
    } catch (err) {
      if (signal.aborted) return undefined;
      this.#opening = undefined;
      this.#state = 'unavailable';
      this.host.log.info({ server: this.upstream.name, err: errorMessage(err) }, 'era companion unavailable; 2025-era agents use the live connection');
      return undefined;
    }
  }

  /** One attempt: a 2025-era connection and its lists; closed again when it does not serve. */
  async #open2025(signal: AbortSignal): Promise<Open> {
    const connection = await this.host.connect(this.upstream, signal, { companion: true });
    try {
      // Only a 2025-era session over Streamable HTTP is a companion (not an SSE fallback).
      if (connection.era !== 'legacy' || connection.transport !== 'http') throw new Error(`it answered as ${connection.era} over ${connection.transport}`);
      const [tools, prompts] = await Promise.all([connection.listTools({ signal }), connection.capabilities?.prompts ? connection.list('prompts', { signal }) : undefined]);
      return {
        connection,
        tools: new Set(tools.tools.map((tool) => tool.name)),
        prompts: new Set((prompts?.items ?? []).map((prompt) => prompt.name)),
        detach: [],
      };
    } catch (err) {
      void connection.close();
      throw err;
    }
  }

  /** The companion's own traffic: questions and log messages to its callers; list changes re-read. */
  #wire(open: Open): Array<() => void> {
    const { connection } = open;
    const relist = (kind: 'tools' | 'prompts') => {
      const names = (items: ReadonlyArray<{ name: string }>): Set<string> => new Set(items.map((item) => item.name));
      const read = this.own.pause.after(() => (kind === 'tools' ? connection.listTools().then((l) => names(l.tools)) : connection.list('prompts').then((l) => names(l.items))));
      void read.then(
        (listed) => (open[kind] = listed),
        (err: unknown) => this.host.log.debug({ server: this.upstream.name, err: errorMessage(err) }, 'era companion re-list failed'),
      );
    };
    return [
      connection.onClose((reason) => this.#drop(connection, errorMessage(reason))),
      connection.onToolsListChanged(() => relist('tools')),
      connection.onNotification('notifications/prompts/list_changed', () => relist('prompts')),
      connection.onNotification('notifications/message', (params) => {
        this.own.logged(params);
        this.host.logMessage(this.upstream, params, [...this.#callers]);
      }),
      connection.routeAgentRequests((method, params, signal) => askAgent([...this.#callers], method, params, signal)),
    ];
  }

  #drop(connection: ServerConnection, why: string): void {
    if (this.#open?.connection !== connection) return;
    this.host.log.info({ server: this.upstream.name, err: why }, 'era companion lost');
    void this.close();
  }
}
