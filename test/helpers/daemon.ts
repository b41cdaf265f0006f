import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { onTestFinished } from 'vitest';
import { preparePolicyLanguage } from '../../src/config/policy-cel.js';
import { DaemonConfigSchema, type DaemonConfig, type DaemonConfigInput } from '../../src/config/schema.js';
import type { DiscoveryResult, ServerConfig, ServerSource } from '../../src/config/types.js';
import { createDaemon, type Daemon, type DaemonDeps } from '../../src/daemon.js';
import { createLogger } from '../../src/logger.js';
import type { DaemonEvent, DaemonEventType } from '../../src/events/daemon-events.js';
import { unstamped } from './daemon-events.js';
import { fixtureServerConfig, type FixtureOptions } from './fixtures.js';
import type { Cleanup } from './process.js';

/**
 * A real daemon on 127.0.0.1:<random port> for integration tests, benchmarks and CLI tests.
 * Discovery is replaced by a fixed server set, the tool cache lives in a temp directory, and
 * everything is torn down when the test finishes (or earlier through `close()`).
 */

export interface StartDaemonOptions {
  /** The servers discovery returns, name → config (e.g. `fixtureServerConfig('echo-stdio')`). */
  servers?: Record<string, ServerConfig>;
  /** Replaces the whole discovery (wins over `servers`), e.g. to return warnings or throw. */
  discover?: () => Promise<DiscoveryResult>;
  /**
   * Run the real discovery over `deps.home` and `deps.cwd` (real files in temp directories)
   * instead of a fixed server set; `servers` and `discover` are then ignored.
   */
  realDiscovery?: boolean;
  /** Config fields over the test defaults (port 0, silent logs, temp dbPath, …). */
  config?: Partial<DaemonConfigInput>;
  /** Any other createDaemon dependency (store, connect, env, …). */
  deps?: Omit<DaemonDeps, 'discover' | 'logger'>;
  /**
   * When to return:
   * - `'ready'`: after the startup gate resolved (default);
   * - `'listening'`: as soon as the port is open, with `start()` running in the background
   *   (for `/ready` 503 → 200 and `/tools?wait` tests; await `daemon.start()` yourself);
   * - `'idle'`: listening, `start()` never called.
   * @default "ready"
   */
  until?: 'ready' | 'listening' | 'idle';
  /**
   * Capture the daemon's log lines (pino JSON) in `logs`, at this level.
   * @default undefined (logs are discarded)
   */
  captureLogs?: pino.LevelWithSilent;
  /**
   * `'test'`: closed when the current test finishes. `'manual'`: the caller closes it (a daemon
   * shared by the tests of a file, started in `beforeAll` and closed in `afterAll`).
   * @default "test"
   */
  lifetime?: 'test' | 'manual';
  /**
   * Where `close` is registered when `lifetime` is `'test'`: a concurrent test passes its context's
   * `onTestFinished` (the global one may name another test while several run).
   * @default vitest's `onTestFinished`
   */
  cleanup?: Cleanup;
}

export interface LogCapture {
  /** Every line written so far, raw. */
  readonly lines: string[];
  /** All lines joined, for `not.toContain(secret)` checks. */
  text(): string;
  /** The lines parsed as JSON objects. */
  entries(): Array<Record<string, unknown>>;
}

/** `RequestInit` whose `body` is any JSON value (a string is sent as is). */
export type JsonInit = Omit<RequestInit, 'body'> & { body?: unknown };

/**
 * `TestDaemon.json` over any `fetch` of a path (a daemon in this process, a `serve` process): a
 * JSON body unless a string is given, the answer parsed (undefined when empty).
 */
export function jsonOver(doFetch: (path: string, init?: RequestInit) => Promise<Response>): TestDaemon['json'] {
  return async <T>(path: string, init: JsonInit = {}) => {
    const { body, ...rest } = init;
    const headers = new Headers(rest.headers);
    const request: RequestInit = { ...rest, headers };
    if (body !== undefined) {
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
      request.body = typeof body === 'string' ? body : JSON.stringify(body);
    }
    const res = await doFetch(path, request);
    const text = await res.text();
    return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as T, headers: res.headers };
  };
}

export interface TestDaemon {
  /** Base URL, e.g. `http://127.0.0.1:49152` (no trailing slash). */
  url: string;
  daemon: Daemon;
  config: DaemonConfig;
  /** Captured log lines; empty unless `captureLogs` was set. */
  logs: LogCapture;
  /** `fetch(url + path, init)`, with the bearer token added when the config has one. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** GET/POST helper that parses the JSON body. */
  json<T = unknown>(path: string, init?: JsonInit): Promise<{ status: number; body: T; headers: Headers }>;
  /** `daemon.close()`; idempotent, and also run when the test finishes. */
  close(): Promise<void>;
}

/** A source for servers given by tests. */
export const TEST_SOURCE: ServerSource = {
  provider: 'test',
  providerName: 'Test',
  path: '/test/mcp.json',
  level: 'native',
};

/** A discovery result serving `servers` from `TEST_SOURCE`. */
export function discoveryOf(servers: Record<string, ServerConfig>, extra: Partial<DiscoveryResult> = {}): DiscoveryResult {
  return {
    configs: { ...servers },
    sources: Object.fromEntries(Object.keys(servers).map((name) => [name, TEST_SOURCE])),
    shadowed: [],
    skipped: [],
    warnings: [],
    exaApiKeys: [],
    ...extra,
  };
}

export async function startDaemon(options: StartDaemonOptions = {}): Promise<TestDaemon> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-daemon-'));
  const logs = captureLines();
  // As every config load does before its parse: CEL only for a config with policies.
  await preparePolicyLanguage(options.config);
  const config = DaemonConfigSchema.parse({
    host: '127.0.0.1',
    port: 0,
    logLevel: options.captureLogs ?? 'silent',
    dbPath: join(dir, 'switchboard.db'),
    shutdownGraceMs: 2000,
    ...options.config,
  });
  const logger = options.captureLogs ? createLogger({ level: options.captureLogs, destination: logs.stream }) : pino({ level: 'silent' });
  const servers = options.servers ?? {};
  const discover = options.discover ?? (() => Promise.resolve(discoveryOf(servers)));
  const daemon = createDaemon(config, {
    cwd: dir,
    home: dir,
    env: {},
    ...options.deps,
    logger,
    ...(options.realDiscovery ? {} : { discover }),
  });

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= daemon.close().finally(() => rm(dir, { recursive: true, force: true })));
  if (options.lifetime !== 'manual') (options.cleanup ?? onTestFinished)(close);

  await daemon.app.listen({ host: config.host, port: config.port });
  const { port } = daemon.app.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  const until = options.until ?? 'ready';
  if (until === 'ready') await daemon.start();
  else if (until === 'listening') void daemon.start().catch(() => undefined);

  const authorised = (init: RequestInit = {}): RequestInit => {
    if (config.token === undefined) return init;
    const headers = new Headers(init.headers);
    if (!headers.has('authorization')) headers.set('authorization', `Bearer ${config.token}`);
    return { ...init, headers };
  };
  const doFetch = (path: string, init?: RequestInit): Promise<Response> => fetch(url + path, authorised(init));

  return {
    url,
    daemon,
    config,
    logs: logs.capture,
    fetch: doFetch,
    json: jsonOver(doFetch),
    close,
  };
}

function captureLines(): { stream: pino.DestinationStream; capture: LogCapture } {
  const lines: string[] = [];
  return {
    stream: { write: (line: string) => void lines.push(line) },
    capture: {
      lines,
      text: () => lines.join(''),
      entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    },
  };
}

/**
 * Resolves with the next event on the bus of `type` matching `predicate` (without `seq`/`ts`).
 * Subscribe (call this) before triggering the change; the subscription ends with the promise or the
 * test (or through `cleanup`: a concurrent test passes its context's `onTestFinished`).
 */
export function nextDaemonEvent<T extends DaemonEventType>(
  daemon: Pick<Daemon, 'bus'>,
  type: T,
  predicate: (event: Extract<DaemonEvent, { type: T }>) => boolean = () => true,
  cleanup: Cleanup = onTestFinished,
): Promise<Extract<DaemonEvent, { type: T }>> {
  return new Promise((resolve) => {
    const unsubscribe = daemon.bus.subscribe((stamped) => {
      const event = unstamped(stamped);
      if (event.type !== type) return;
      const typed = event as Extract<DaemonEvent, { type: T }>;
      if (!predicate(typed)) return;
      unsubscribe();
      resolve(typed);
    });
    cleanup(unsubscribe);
  });
}

/**
 * Records every event on the bus from now on (without `seq`/`ts`), in order, until the test
 * finishes (or `cleanup` runs: a concurrent test passes its context's `onTestFinished`).
 */
export function recordDaemonEvents(daemon: Pick<Daemon, 'bus'>, cleanup: Cleanup = onTestFinished): DaemonEvent[] {
  const events: DaemonEvent[] = [];
  cleanup(daemon.bus.subscribe((event) => void events.push(unstamped(event))));
  return events;
}

/** A daemon whose one server is the `echo-stdio` fixture, named `echo` (tools `mcp_echo_echo`, `mcp_echo_add`, …). */
export function startEchoDaemon(options: Omit<StartDaemonOptions, 'servers'> & { echo?: FixtureOptions } = {}): Promise<TestDaemon> {
  const { echo, ...rest } = options;
  return startDaemon({ ...rest, servers: { echo: fixtureServerConfig('echo-stdio', echo) } });
}
