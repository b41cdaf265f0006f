import type { Server } from '@modelcontextprotocol/server';
import { advertised, createAgentServer, type AgentServerOptions } from './agent-server.js';

/** Idle servers kept for the next 2026-07-28 requests; more in flight at once are built and dropped. @default 16 */
export const MAX_IDLE_MODERN_SERVERS = 16;

interface Pooled {
  server: Server;
  /** The capabilities it advertises (and registered handlers for), as a comparable string. */
  key: string;
  /** In the idle list: an instance is never handed out twice, even if it closed twice. */
  idle: boolean;
}

/**
 * The `Server` of each 2026-07-28 request, reused between requests (issue #27 target 2).
 *
 * The SDK's `createMcpHandler` asks its factory for an instance per request and only requires that
 * it is not serving another exchange (`server.transport === undefined`). It connects the instance
 * to a fresh per-request transport, seeds the era, the negotiated version and the client's
 * identity from the request's envelope, and closes it once the response is delivered; closing
 * clears every bit of per-exchange state (`Protocol._onclose`). So an instance whose exchange has
 * closed is as good as a new one — our handlers read the client's capabilities from each request's
 * envelope, never from the instance — and building one per request (a `Server`, its handler maps
 * and our closures) was most of what made a modern call cost more than a 2025-era session's.
 *
 * An instance goes back to the pool from its `onclose` (the SDK restores ours once the exchange is
 * over). One that never closes (a `subscriptions/listen` product, closed before it was ever
 * connected) is simply not reused. Instances advertise the capabilities of the moment they were
 * built, so a change of the aggregate capabilities retires the idle ones.
 */
export class ModernServers {
  readonly #options: AgentServerOptions;
  readonly #maxIdle: number;
  #idle: Pooled[] = [];

  constructor(options: AgentServerOptions, maxIdle = MAX_IDLE_MODERN_SERVERS) {
    this.#options = options;
    this.#maxIdle = maxIdle;
  }

  /** An instance for one request, whoever makes it. */
  take(): Server {
    const key = JSON.stringify(advertised(this.#options.manager.capabilities()));
    let pooled = this.#idle.pop();
    if (pooled && pooled.key !== key) {
      // The aggregate changed: every idle instance advertises the old capabilities.
      this.#idle = [];
      pooled = undefined;
    }
    pooled ??= this.#build(key);
    pooled.idle = false;
    return pooled.server;
  }

  /** How many instances wait for a request (for tests). */
  get idle(): number {
    return this.#idle.length;
  }

  #build(key: string): Pooled {
    const server = createAgentServer(this.#options);
    const pooled: Pooled = { server, key, idle: false };
    server.onclose = () => {
      if (pooled.idle || this.#idle.length >= this.#maxIdle) return;
      pooled.idle = true;
      this.#idle.push(pooled);
    };
    return pooled;
  }
}
