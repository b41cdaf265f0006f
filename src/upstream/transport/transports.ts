import type { FetchLike, OAuthClientProvider, Transport } from '@modelcontextprotocol/client';
import type { ServerConfig, TransportKind } from '../../config/types.js';
import { traceHeadersFetch } from '../../telemetry/trace-headers.js';
import { StdioProcessTransport } from './stdio-transport.js';
import { sandboxEnv, sandboxPlan, viewOf, type SandboxContext, type SandboxView } from '../process/sandbox-plan.js';
import { sandboxedLaunch } from '../process/sandbox-launch.js';
import { watchHttpFailures, type HttpFailure } from './first-failure.js';
import { watchRetryAfter, type Throttle } from './retry-after.js';
import { loadedSdk, sdk } from '../sdk.js';

/**
 * Server config → SDK transport, with the env and header policy. Validation proper lives in
 * src/config; here a config is only read as far as needed to build the transport.
 */

/** `type` if set, else `http` when only `url` is given, else `stdio`. */
export function transportKindOf(config: ServerConfig): TransportKind {
  const type = config.type?.trim().toLowerCase();
  if (type === 'stdio' || type === 'http' || type === 'sse') return type;
  if (type) throw new Error(`Unknown transport type "${config.type}"`);
  return config.url && !config.command ? 'http' : 'stdio';
}

/**
 * The stdio child's environment: the SDK's safe defaults (HOME, PATH, …), then the named
 * variables of the daemon's environment, then the server's own `env`, which wins. Nothing else
 * of the daemon's environment leaks, since it may hold tokens meant for other servers.
 */
export function buildStdioEnv(config: ServerConfig, inheritEnv: readonly string[] = [], daemonEnv: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = sdk().getDefaultEnvironment();
  for (const name of inheritEnv) {
    const value = daemonEnv[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...config.env };
}

/**
 * A fetch that gives every request its own signal, linked to the one the transport passes.
 * The SDK's HTTP and SSE transports hand one long-lived signal to every request, and undici keeps
 * an abort listener on it per request until that request is garbage-collected, so a busy
 * connection crosses undici's 1 500-listener mark and Node prints MaxListenersExceededWarning.
 * A linked signal (`AbortSignal.any`) adds no listener to the long-lived one.
 */
export function perRequestSignalFetch(base: FetchLike = (url, init) => fetch(url, init)): FetchLike {
  return (url, init) => base(url, init?.signal ? { ...init, signal: AbortSignal.any([init.signal]) } : init);
}

/**
 * The HTTP status behind a Streamable HTTP failure, whose message leaves it out. Recognised by
 * shape (the SDK's `StreamableHTTPError`: a numeric `code`, its message prefix) so that this
 * module does not load the HTTP transports, which are imported on demand.
 */
export function httpStatusOf(err: unknown): number | undefined {
  const loaded = loadedSdk();
  return loaded !== undefined && err instanceof loaded.SdkHttpError && typeof err.status === 'number' && err.status > 0 ? err.status : undefined;
}

/** Whether `err` is an HTTP 4xx answer to a Streamable HTTP request. */
export function isHttpClientError(err: unknown): boolean {
  const status = httpStatusOf(err);
  return status !== undefined && status >= 400 && status < 500;
}

/**
 * An OAuth provider that wants to see the server's own answers to our requests: the SDK hands
 * its provider only what it decided (re-authorize, step up), not whether a 403 asked for scope
 * (issue #29 item 3). Recognised by shape, so this module needs nothing from oauth/.
 */
interface ResponseWatcher {
  /** May reject, refusing the answer (then the request fails with that error). */
  observeResponse(response: Response): Promise<void>;
}

function watchesResponses(provider: OAuthClientProvider | undefined): provider is OAuthClientProvider & ResponseWatcher {
  return typeof (provider as Partial<ResponseWatcher> | undefined)?.observeResponse === 'function';
}

export interface CreateTransportOptions {
  /** Extra daemon environment variable names passed to stdio children. */
  inheritEnv?: readonly string[];
  /** Receives a stdio child's stderr. */
  onStderr?: (chunk: Buffer) => void;
  /** The daemon environment `inheritEnv` reads from. @default process.env */
  daemonEnv?: NodeJS.ProcessEnv;
  fetch?: FetchLike;
  /** Signs the http/sse transport in with OAuth (issue #16); absent for static credentials. */
  authProvider?: OAuthClientProvider;
  /** Keeps the server's pause (429/503 with `Retry-After`, issue #26): no request is sent during it. */
  throttle?: Throttle;
  /** Told of each error answer (not 401/403), to keep a failed connect's first cause (issue #29). */
  onHttpFailure?: (failure: HttpFailure) => void;
  /** The daemon's sandbox default and own paths (issue #42); a stdio server asking for a sandbox needs it. */
  sandbox?: SandboxContext;
  /** Told, just before the spawn, of the sandbox a stdio server starts in. */
  onSandbox?: (view: SandboxView) => void;
}

/** Whether a header value holds CR, LF, NUL or anything beyond Latin-1, which fetch refuses. */
function isInvalidHeaderValue(value: string): boolean {
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if (code === 0 || code === 10 || code === 13 || code > 0xff) return true;
  }
  return false;
}

/**
 * Refuses env and header values that Node or undici would reject. Their errors quote the value
 * (a token from a `!cmd` that printed two lines, say), and a connect error travels to logs,
 * `/status` and events; this error names only the key.
 */
export function assertTransportValues(config: ServerConfig): void {
  for (const [key, value] of Object.entries(config.headers ?? {})) {
    if (isInvalidHeaderValue(value)) throw new Error(`header "${key}" has an invalid value (control or non-Latin-1 characters)`);
  }
  for (const [key, value] of Object.entries(config.env ?? {})) {
    if (value.includes('\0')) throw new Error(`env "${key}" has an invalid value (a NUL byte)`);
  }
}

export function createTransport(kind: TransportKind, config: ServerConfig, options: CreateTransportOptions = {}): Transport {
  assertTransportValues(config);
  if (kind === 'stdio') {
    if (!config.command) throw new Error('A stdio server needs a "command"');
    const env = buildStdioEnv(config, options.inheritEnv, options.daemonEnv);
    const plan = sandboxPlan(config, options.sandbox);
    if (!plan) return new StdioProcessTransport({ command: config.command, args: config.args, env, cwd: config.cwd, onStderr: options.onStderr });
    const daemonEnv = options.sandbox?.env ?? options.daemonEnv ?? process.env;
    return new StdioProcessTransport({
      command: config.command,
      args: config.args,
      env: sandboxEnv(plan, env, config.env, daemonEnv),
      cwd: config.cwd,
      onStderr: options.onStderr,
      wrap: (launch) => {
        options.onSandbox?.(viewOf(plan));
        return sandboxedLaunch(plan, launch, daemonEnv);
      },
    });
  }
  if (!config.url) throw new Error(`An ${kind} server needs a "url"`);
  const url = new URL(config.url);
  const given: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const raw = options.onHttpFailure ? watchHttpFailures(given, options.onHttpFailure) : given;
  const provider = options.authProvider;
  const watched: FetchLike = watchesResponses(provider)
    ? async (input, init) => {
        const response = await raw(input, init);
        try {
          await provider.observeResponse(response);
        } catch (err) {
          await response.body?.cancel().catch(() => {});
          throw err;
        }
        return response;
      }
    : raw;
  const base = options.throttle ? watchRetryAfter(watched, options.throttle) : watched;
  const fetch = traceHeadersFetch(perRequestSignalFetch(base));
  // Both SDK transports merge requestInit.headers into every request they make, the SSE one
  // including the EventSource GET.
  const requestInit: RequestInit = { headers: { ...config.headers } };
  const authProvider = options.authProvider ? { authProvider: options.authProvider } : {};
  const { StreamableHTTPClientTransport, SSEClientTransport } = sdk();
  return kind === 'http' ? new StreamableHTTPClientTransport(url, { requestInit, fetch, ...authProvider }) : new SSEClientTransport(url, { requestInit, fetch, ...authProvider });
}
