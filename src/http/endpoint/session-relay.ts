import type { ServerNotifier } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import { errorMessage } from '../../errors.js';
import type { DaemonEvent } from '../../events/daemon-events.js';
import type { MCPManager, ServerTrafficEvent } from '../../upstream/manager.js';
import type { EventBus } from '../../events/event-bus.js';
import { asAgentLog, passesLevel } from './agent-channel.js';
import type { SessionState } from './agent-channel.js';
import type { LegacySession } from './legacy-sessions.js';
import type { ListKind, McpLists } from '../../gateway/index.js';

const LIST_KINDS: readonly ListKind[] = ['tools', 'prompts', 'resources'];
const KIND_OF: Partial<Record<DaemonEvent['type'], ListKind>> = {
  'tools.changed': 'tools',
  'prompts.changed': 'prompts',
  'resources.changed': 'resources',
};

export interface SessionRelayOptions {
  manager: Pick<MCPManager, 'onServerTraffic'>;
  /** The event bus: its catalogue changes become `list_changed`. */
  bus: Pick<EventBus, 'subscribe'>;
  /** The open 2025-era sessions. */
  sessions: () => Iterable<[string, LegacySession]>;
  /** What each agent's view holds: a session hears `list_changed` only when its view's list changed. */
  lists: Pick<McpLists, 'digest'>;
  /** The 2026-07-28 side: its `subscriptions/listen` streams. */
  modern: ServerNotifier;
  /** Changes closer together than this produce one `list_changed` per kind and session. */
  debounceMs: number;
  /** When `read_result` enters or leaves a caller's tools (its first result kept, its last gone; issue #38). @default never */
  keptResultsChanged?: (listener: (agent: string | undefined) => void) => () => void;
  log: Logger;
}

/**
 * What `/mcp` clients hear without asking (SPEC §7): `list_changed` of each kind (debounced),
 * `resources/updated` for the URIs they subscribed to, and the log messages no call in progress
 * claimed. 2025-era sessions get them on their GET stream; 2026-07-28 clients on their listen
 * streams (which the revision has for list changes and updates, not for log messages).
 */
export class SessionRelay {
  private readonly timers = new Map<ListKind, NodeJS.Timeout>();
  private readonly stops: Array<() => void>;
  /** Per session of an agent with a view: the digest of each list as it last knew it. */
  private readonly known = new WeakMap<SessionState, Partial<Record<ListKind, string>>>();

  constructor(private readonly options: SessionRelayOptions) {
    this.stops = [
      options.bus.subscribe((event) => {
        const kind = KIND_OF[event.type];
        if (kind) this.listChanged(kind);
      }),
      options.manager.onServerTraffic((event) => this.traffic(event)),
      ...(options.keptResultsChanged ? [options.keptResultsChanged((agent) => this.toolsChangedFor(agent))] : []),
    ];
  }

  close(): void {
    for (const stop of this.stops) stop();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private listChanged(kind: ListKind): void {
    if (this.timers.has(kind)) return;
    const timer = setTimeout(() => {
      this.timers.delete(kind);
      this.broadcast(kind);
    }, this.options.debounceMs);
    timer.unref();
    this.timers.set(kind, timer);
  }

  /** Notes what a new session of an agent with a view knows of each list (call at open). */
  baseline(state: SessionState): void {
    const view = state.agent?.view;
    if (!view) return;
    const known: Partial<Record<ListKind, string>> = {};
    for (const kind of LIST_KINDS) known[kind] = this.options.lists.digest(kind, view);
    this.known.set(state, known);
  }

  /**
   * Whether a session must hear that `kind` changed: always without a view (the operator's, or
   * no keys); with one, only when what its view holds differs from what it last knew (issue #22).
   */
  private viewChanged(state: SessionState, kind: ListKind): boolean {
    const view = state.agent?.view;
    if (!view) return true;
    const current = this.options.lists.digest(kind, view);
    let known = this.known.get(state);
    if (!known) this.known.set(state, (known = {}));
    if (!listChangedFor(known[kind], current)) return false;
    known[kind] = current;
    return true;
  }

  private broadcast(kind: ListKind): void {
    const { modern } = this.options;
    for (const [id, session] of this.options.sessions()) {
      if (!this.viewChanged(session.state, kind)) continue;
      const server = session.server;
      // A session opened before any server had prompts (or resources) did not declare them, and
      // the SDK refuses to announce a change of what it never declared: that is expected here.
      const sent = kind === 'tools' ? server.sendToolListChanged() : kind === 'prompts' ? server.sendPromptListChanged() : server.sendResourceListChanged();
      void Promise.resolve(sent).catch((err: unknown) => this.options.log.debug({ session: id, kind, err: errorMessage(err) }, 'list_changed not delivered'));
    }
    // The SDK's listen streams cannot be told apart here: each hears every change, content-free,
    // and a list it then asks for is its own view.
    if (kind === 'tools') modern.toolsChanged();
    else if (kind === 'prompts') modern.promptsChanged();
    else modern.resourcesChanged();
  }

  /** `read_result` entered or left the tools of `agent` (undefined: sessions without an agent) only. */
  private toolsChangedFor(agent: string | undefined): void {
    for (const [id, session] of this.options.sessions()) {
      if (session.state.agent?.name !== agent) continue;
      void session.server.sendToolListChanged().catch((err: unknown) => this.options.log.debug({ session: id, err: errorMessage(err) }, 'list_changed not delivered'));
    }
    this.options.modern.toolsChanged();
  }

  private traffic(event: ServerTrafficEvent): void {
    if (event.type === 'list.changed') {
      this.listChanged(event.kind);
      return;
    }
    for (const [id, session] of this.options.sessions()) {
      let sent: Promise<void> | undefined;
      if (event.type === 'resource.updated') {
        if (session.state.subscriptions.has(event.uri)) sent = session.server.sendResourceUpdated({ uri: event.uri });
      } else if (passesLevel(event.params.level, session.state.logLevel) && (session.state.agent?.view?.allowsServer(event.server) ?? true)) {
        sent = session.server.notification({ method: 'notifications/message', params: asAgentLog(event.server, event.params) as never });
      }
      void sent?.catch((err: unknown) => this.options.log.debug({ session: id, type: event.type, err: errorMessage(err) }, 'notification not delivered'));
    }
    if (event.type === 'resource.updated') this.options.modern.resourceUpdated(event.uri);
  }
}

/** The decision of `list_changed` for a session with a view: its list's digest moved (or was never noted). */
export function listChangedFor(known: string | undefined, current: string): boolean {
  return known !== current;
}
