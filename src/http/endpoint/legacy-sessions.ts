import { randomUUID } from 'node:crypto';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type { Server } from '@modelcontextprotocol/server';
import { ownedId } from '../../util/replica-id.js';
import type { AgentRef } from '../../gateway/index.js';
import type { SessionState } from './agent-channel.js';

/**
 * One 2025-era `/mcp` session as the rest of `/mcp` sees it: its transport and `Server`, and what
 * it asked for — read-only here. Its agent and its activity change only through `LegacySessions`;
 * its log level and subscriptions only through its own `Server`'s handlers.
 */
export interface LegacySession {
  readonly transport: NodeStreamableHTTPServerTransport;
  readonly server: Server;
  readonly state: Readonly<SessionState>;
}

/** A session as the table keeps it. */
interface Entry extends LegacySession {
  readonly state: SessionState;
  /** Requests (and GET streams) open right now; a session with none is idle. */
  active: number;
  /** When the last request started or ended (performance.now(), ms). */
  lastSeen: number;
}

/** What `serve` watches for the end of a request: its response. */
export interface ResponseEnd {
  once(event: 'close', listener: () => void): unknown;
}

export interface LegacySessionsOptions {
  /** A fresh `Server` for a new session; `onCancelled` closes a cancelled call's stream. */
  createServer: (onCancelled: (requestId: string | number) => void, state: SessionState) => Server;
  /** Called once a session has ended, with what it had asked for (to undo its subscriptions). */
  onClosed?: (state: SessionState) => void;
  /** Open sessions beyond this evict the longest-idle one, or are refused when all are busy. */
  maxSessions: number;
  /** A session with no request (and no open stream) for this long is closed. */
  idleMs: number;
  /** In a cluster, the replica id every session id starts with (util/replica-id.ts): another replica forwards it here. */
  replicaId?: string;
}

/**
 * The sessions of 2025-era clients on `/mcp` (initialize, `Mcp-Session-Id`, the GET stream).
 * Agents that exit without DELETE leave sessions behind: idle ones are reaped, and when the table
 * is full the longest-idle one makes room, so abandoned sessions never lock everyone else out.
 */
export class LegacySessions {
  readonly #sessions = new Map<string, Entry>();
  /** Every session this table opened, by the face handed out (one still initializing is not in `#sessions` yet). */
  readonly #entries = new WeakMap<LegacySession, Entry>();
  readonly #options: LegacySessionsOptions;
  readonly #reaper: NodeJS.Timeout;

  constructor(options: LegacySessionsOptions) {
    this.#options = options;
    this.#reaper = setInterval(() => this.#reapIdle(), Math.min(options.idleMs, 60_000));
    this.#reaper.unref();
  }

  values(): IterableIterator<LegacySession> {
    return this.#sessions.values();
  }

  entries(): IterableIterator<[string, LegacySession]> {
    return this.#sessions.entries();
  }

  /**
   * The session `id` for a request of `agent` (none: the operator, or no keys). A session is its
   * opener's: another key gets undefined, as for an unknown session (no probing). The agent's
   * settings may have changed since it opened the session: its view is the current one from now.
   */
  resume(id: string, agent: AgentRef | undefined): LegacySession | undefined {
    const session = this.#sessions.get(id);
    if (!session || session.state.agent?.name !== agent?.name) return undefined;
    if (agent) session.state.agent = agent;
    return session;
  }

  /** Counts a request of `session` as in progress until `response` closes: a session with none is idle. */
  serve(session: LegacySession, response: ResponseEnd): void {
    const entry = this.#entries.get(session);
    if (!entry) return;
    entry.active += 1;
    entry.lastSeen = performance.now();
    response.once('close', () => {
      entry.active -= 1;
      entry.lastSeen = performance.now();
    });
  }

  /** Room for one more session: true when there is (after evicting the longest-idle one). */
  async makeRoom(): Promise<boolean> {
    if (this.#sessions.size < this.#options.maxSessions) return true;
    const oldest = this.#idle()[0];
    if (!oldest) return false;
    await oldest.server.close();
    return true;
  }

  /** A new session of `agent` (none: the operator, or no keys); it joins the table once its `initialize` succeeded. */
  async open(agent?: AgentRef): Promise<LegacySession> {
    const replicaId = this.#options.replicaId;
    const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: replicaId === undefined ? randomUUID : () => ownedId(replicaId, randomUUID()),
      onsessioninitialized: (id) => {
        this.#sessions.set(id, session);
      },
    });
    const state: SessionState = {
      id: () => transport.sessionId,
      // Asked only while requests are served, by when `session` exists.
      clientCapabilities: () => session.server.getClientCapabilities(),
      subscriptions: new Set(),
      ...(agent ? { agent } : {}),
    };
    const server = this.#options.createServer((requestId) => transport.closeSSEStream(requestId), state);
    const session: Entry = { transport, server, state, active: 0, lastSeen: performance.now() };
    this.#entries.set(session, session);
    // Fires for DELETE, for close on shutdown and for a transport error alike.
    server.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined && this.#sessions.get(id) === session) this.#sessions.delete(id);
      this.#options.onClosed?.(state);
    };
    await server.connect(transport);
    return session;
  }

  async closeAll(): Promise<void> {
    const open = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(open.map((session) => session.server.close()));
  }

  stop(): void {
    clearInterval(this.#reaper);
  }

  #idle(): Entry[] {
    return [...this.#sessions.values()].filter((s) => s.active === 0).sort((a, b) => a.lastSeen - b.lastSeen);
  }

  #reapIdle(): void {
    const cutoff = performance.now() - this.#options.idleMs;
    for (const session of this.#idle()) if (session.lastSeen <= cutoff) void session.server.close();
  }
}
