import type { CallToolResult } from '@modelcontextprotocol/client';
import { pino } from 'pino';
import type { ServerConfig, ServerSource } from '../../src/config/types.js';
import type { CallToolOptions, ServerConnection } from '../../src/upstream/transport/server-connection.js';
import { StderrRing } from '../../src/upstream/transport/stderr-ring.js';
import type { RelayedNotification } from '../../src/upstream/transport/server-traffic.js';
import type { HealthSettings, StatusChange, UpstreamHost, UpstreamIdentity } from '../../src/upstream/server/upstream-host.js';
import { Upstream } from '../../src/upstream/server/upstream.js';
import type { CallerChannel } from '../../src/upstream/transport/caller.js';
import { deferred, type Deferred } from '../../src/util/deferred.js';
import { ManualClock } from './manual-clock.js';

/**
 * The input events of an `Upstream` state machine, under a test's control: what `connect`
 * resolves with (a tiny `ServerConnection` whose close, notifications and answers the test fires)
 * and what the host is told. Everything else — the state machine, its schedule, the request
 * loop — is the real code. For unit tests of upstream.ts and upstream-request.ts only; the rest
 * of the suite runs real fixture servers.
 */

/** Items pushed over time, taken in order; `next()` waits for one not taken yet. */
export class Arrivals<T> {
  readonly all: T[] = [];
  private cursor = 0;
  private readonly waiters: Array<() => void> = [];

  push(item: T): void {
    this.all.push(item);
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** The next item not taken yet, waiting up to 5 s (a test waiting for the wrong thing says so). */
  async next(): Promise<T> {
    while (this.cursor >= this.all.length) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`nothing arrived within 5 s (seen ${this.all.length})`)), 5_000);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.all[this.cursor++] as T;
  }

  /** Whether items arrived that `next()` has not taken. */
  get untaken(): number {
    return this.all.length - this.cursor;
  }
}

/** One request sent on a fake connection, answered (or failed) by the test. */
export interface SentRequest {
  method: string;
  params: Record<string, unknown>;
  opts: CallToolOptions;
  answer: Deferred<Record<string, unknown>>;
}

/** A live connection as the state machine sees one; the test fires its events. */
export class FakeConnection implements ServerConnection {
  readonly name = 'up';
  readonly era = 'legacy';
  readonly protocolVersion = '2025-11-25';
  readonly verdict = { kind: 'legacy' } as const;
  readonly verdictFromCache = false;
  readonly capabilities = { tools: {}, logging: {} };
  readonly stderr = new StderrRing();
  /** How many times `close()` was called. */
  closed = 0;
  readonly sent = new Arrivals<SentRequest>();
  /** The answer to each ping; a test replaces it to freeze the server. */
  pingAnswer: () => Promise<void> = () => Promise.resolve();
  private readonly closeListeners = new Set<(reason: Error) => void>();
  private readonly notificationListeners = new Map<string, Set<(params: Record<string, unknown>) => void>>();

  constructor(readonly transport: 'stdio' | 'http' = 'http') {}

  /** The transport closed on its own (the process died, the socket broke). */
  fireClose(reason: Error): void {
    for (const listener of [...this.closeListeners]) listener(reason);
  }

  fireNotification(method: RelayedNotification, params: Record<string, unknown>): void {
    for (const listener of [...(this.notificationListeners.get(method) ?? [])]) listener(params);
  }

  listTools(): Promise<never> {
    return Promise.reject(new Error('the fake host lists tools itself'));
  }

  callTool(name: string, args: Record<string, unknown> | undefined, opts: CallToolOptions = {}): Promise<CallToolResult> {
    return this.request('tools/call', { name, ...(args ? { arguments: args } : {}) }, opts) as Promise<CallToolResult>;
  }

  ping(): Promise<void> {
    return this.pingAnswer();
  }

  onClose(listener: (reason: Error) => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  onToolsListChanged(): () => void {
    return () => undefined;
  }

  onTransportError(): () => void {
    return () => undefined;
  }

  onNotification(method: RelayedNotification, listener: (params: Record<string, unknown>) => void): () => void {
    const listeners = this.notificationListeners.get(method) ?? new Set();
    this.notificationListeners.set(method, listeners.add(listener));
    return () => listeners.delete(listener);
  }

  routeAgentRequests(): () => void {
    return () => undefined;
  }

  list(): Promise<never> {
    return Promise.reject(new Error('the fake host lists the other kinds itself'));
  }

  subscribeResource(uri: string, opts: CallToolOptions = {}): Promise<void> {
    return this.request('resources/subscribe', { uri }, opts).then(() => undefined);
  }

  unsubscribeResource(uri: string, opts: CallToolOptions = {}): Promise<void> {
    return this.request('resources/unsubscribe', { uri }, opts).then(() => undefined);
  }

  forward(method: string, params: Record<string, unknown> | undefined, opts: CallToolOptions = {}): Promise<Record<string, unknown>> {
    return this.request(method, params ?? {}, opts);
  }

  close(): Promise<void> {
    this.closed += 1;
    return Promise.resolve();
  }

  private request(method: string, params: Record<string, unknown>, opts: CallToolOptions): Promise<Record<string, unknown>> {
    const answer = deferred<Record<string, unknown>>();
    this.sent.push({ method, params, opts, answer });
    return answer.promise;
  }
}

/** One call of `host.connect`, settled by the test. */
export interface ConnectAttempt {
  signal: AbortSignal;
  resolve(connection: ServerConnection): void;
  reject(err: unknown): void;
}

/** What the host was told, besides status changes. */
export type HostNote =
  { kind: 'listed' | 'markStale' | 'dropTools' | 'holdForSignIn'; cause?: string } | { kind: 'logMessage'; params: Record<string, unknown>; callers: readonly CallerChannel[] };

export interface FakeHost extends UpstreamHost {
  readonly clock: ManualClock;
  readonly connects: Arrivals<ConnectAttempt>;
  /** Every status change the host was told of, in order; `next()` waits for the next one. */
  readonly changes: Arrivals<StatusChange>;
  readonly notes: HostNote[];
}

/** A host whose connects the test settles, on a manual clock, with the jitter pinned. */
export function fakeHost(random = 0.5): FakeHost {
  const connects = new Arrivals<ConnectAttempt>();
  const changes = new Arrivals<StatusChange>();
  const notes: HostNote[] = [];
  return {
    log: pino({ level: 'silent' }),
    clock: new ManualClock(1_000_000),
    random: () => random,
    protocol: 'auto',
    connects,
    changes,
    notes,
    connect(_upstream, signal) {
      const attempt = deferred<ServerConnection>();
      connects.push({ signal, resolve: attempt.resolve, reject: attempt.reject });
      return attempt.promise;
    },
    dropVerdict: () => undefined,
    list: () => Promise.resolve({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }),
    listOthers: () => Promise.resolve({}),
    listed: (_upstream, _listing, cause) => void notes.push({ kind: 'listed', cause }),
    setOthers: () => undefined,
    markStale: () => void notes.push({ kind: 'markStale' }),
    dropTools: (_upstream, cause) => void notes.push({ kind: 'dropTools', cause }),
    holdForSignIn: (_upstream, cause) => void notes.push({ kind: 'holdForSignIn', cause }),
    resourceUpdated: () => undefined,
    logMessage: (_upstream, params, callers) => void notes.push({ kind: 'logMessage', params, callers }),
    statusChanged: (change) => changes.push(change),
  };
}

/** Small numbers: backoff 100 ms doubling, no pings, suspended past 2 crashes within 10 s. */
export const TEST_HEALTH: HealthSettings = {
  enabled: true,
  pingIntervalMs: 0,
  pingTimeoutMs: 100,
  backoff: { baseMs: 100, maxMs: 10_000, jitter: 0.2 },
  crashLimit: 2,
  crashWindowMs: 10_000,
};

const SOURCE: ServerSource = { provider: 'api', providerName: 'API', path: '', level: 'native' };

export function identity(config: ServerConfig = { url: 'http://127.0.0.1:1/mcp' }): UpstreamIdentity {
  return { name: 'up', config, configHash: 'hash', source: SOURCE };
}

export function newUpstream(host: FakeHost, health: Partial<HealthSettings> = {}, config?: ServerConfig): Upstream {
  return new Upstream(identity(config), host, { ...TEST_HEALTH, ...health });
}

/** Starts `upstream` and connects it with a fresh fake connection. */
export async function connected(upstream: Upstream, host: FakeHost, connection = new FakeConnection()): Promise<FakeConnection> {
  const task = upstream.start('startup', { returned: false });
  (await host.connects.next()).resolve(connection);
  await task.done;
  if (upstream.status !== 'connected') throw new Error(`expected connected, is ${upstream.status}`);
  // Later waits start after this change.
  await reached(host, 'connected');
  return connection;
}

/** The status transitions the host was told of, as `previous→status`. */
export function transitions(host: FakeHost): string[] {
  return host.changes.all.map((c) => `${c.previous}→${c.status}`);
}

/** Waits for the next status change to `status` (earlier changes of other statuses are passed over). */
export async function reached(host: FakeHost, status: StatusChange['status']): Promise<StatusChange> {
  for (;;) {
    const change = await host.changes.next();
    if (change.status === status) return change;
  }
}
