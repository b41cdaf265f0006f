import { nodeHttpFetch, type FetchLike, type HttpRequestInit } from './node-http-fetch.js';
import { readEvents, type SseEvent } from './sse-parser.js';

/**
 * A small HTTP client for a running daemon: one deadline per request, bearer auth, and the
 * daemon's `{ error: { code, message } }` bodies turned into `DaemonError`s that carry the code.
 */

export type { FetchLike };

export interface DaemonClientOptions {
  /** Base URL of the daemon. @default "http://127.0.0.1:7337" */
  url: string;
  /** Sent as `Authorization: Bearer <token>` when set. */
  token?: string;
  /** @default `node:http` (node-http-fetch.ts); a `fetch` works too */
  fetch?: FetchLike;
}

export interface RequestOptions {
  /** Query parameters; `undefined` values are left out. */
  query?: Record<string, string | undefined>;
  /** Serialised as the JSON request body. */
  body?: unknown;
  /** Deadline for the whole request, body included; `0` waits as long as the daemon does. @default 30000 */
  timeoutMs?: number;
}

export interface StreamOptions extends RequestOptions {
  /** Each event before the final one (`progress`), as it arrives. */
  onEvent(event: SseEvent): void;
}

export interface DaemonResponse {
  status: number;
  /** The body exactly as the daemon sent it (what `--json` prints). */
  text: string;
  /** The parsed body. */
  body: unknown;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** The daemon could not be reached at all (refused, DNS, timeout, reset). */
export class DaemonUnreachableError extends Error {
  readonly url: string;
  readonly reason: string;

  constructor(url: string, reason: string, options?: { cause?: unknown }) {
    super(`cannot reach daemon at ${url}: ${reason}`, options);
    this.name = 'DaemonUnreachableError';
    this.url = url;
    this.reason = reason;
  }
}

/** The daemon answered with an error status; `code` is its catalogue code (or `HTTP_<status>`). */
export class DaemonError extends Error {
  readonly code: string;
  readonly status: number;
  /** The names the daemon thinks were meant (`suggestions` of a `TOOL_NOT_FOUND`). */
  readonly suggestions: readonly string[];

  constructor(code: string, message: string, status: number, suggestions: readonly string[] = []) {
    super(message);
    this.name = 'DaemonError';
    this.code = code;
    this.status = status;
    this.suggestions = suggestions;
  }
}

export interface DaemonClient {
  readonly url: string;
  request(method: 'GET' | 'POST' | 'DELETE', path: string, options?: RequestOptions): Promise<DaemonResponse>;
  /**
   * A request answered as a `text/event-stream` (`POST /tools/:name/call`): every event goes to
   * `onEvent` until the final `result`, whose data is the response; an `error` event throws its
   * `DaemonError`. A daemon that answers with JSON anyway is read as `request` reads it.
   */
  stream(method: 'POST', path: string, options: StreamOptions): Promise<DaemonResponse>;
}

export function createDaemonClient(options: DaemonClientOptions): DaemonClient {
  const base = options.url.replace(/\/+$/, '');
  const doFetch = options.fetch ?? nodeHttpFetch;

  function init(method: string, req: RequestOptions, accept: string): { init: HttpRequestInit; timeoutMs: number } {
    const timeoutMs = req.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const headers: Record<string, string> = { accept };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (req.body !== undefined) headers['content-type'] = 'application/json';
    return {
      timeoutMs,
      init: {
        method,
        headers,
        ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}),
        ...(timeoutMs > 0 ? { signal: AbortSignal.timeout(timeoutMs) } : {}),
      },
    };
  }

  async function request(method: 'GET' | 'POST' | 'DELETE', path: string, req: RequestOptions = {}): Promise<DaemonResponse> {
    const { init: requestInit, timeoutMs } = init(method, req, 'application/json');
    let status: number;
    let text: string;
    try {
      const res = await doFetch(base + path + queryString(req.query), requestInit);
      status = res.status;
      // The deadline covers the body too: a daemon that stalls mid-answer is as unreachable.
      text = await res.text();
    } catch (err) {
      throw new DaemonUnreachableError(base, describeFetchError(err, timeoutMs), { cause: err });
    }
    return toResponse(status, text);
  }

  async function stream(method: 'POST', path: string, req: StreamOptions): Promise<DaemonResponse> {
    const { init: requestInit, timeoutMs } = init(method, req, 'text/event-stream');
    try {
      const res = await doFetch(base + path + queryString(req.query), requestInit);
      const type = res.headers.get('content-type') ?? '';
      if (!type.startsWith('text/event-stream') || !res.body) return toResponse(res.status, await res.text());
      for await (const event of readEvents(res.body as unknown as AsyncIterable<Uint8Array>)) {
        if (event.event === 'result') return toResponse(res.status, event.data);
        if (event.event === 'error') throw toDaemonError(res.status, event.data, parseJson(event.data));
        req.onEvent(event);
      }
    } catch (err) {
      if (err instanceof DaemonError) throw err;
      throw new DaemonUnreachableError(base, describeFetchError(err, timeoutMs), { cause: err });
    }
    throw new DaemonError('INVALID_RESPONSE', 'the daemon ended the stream without a result', 200);
  }

  return { url: base, request, stream };
}

function toResponse(status: number, text: string): DaemonResponse {
  const body = parseJson(text);
  if (status >= 400) throw toDaemonError(status, text, body);
  if (body === undefined) {
    throw new DaemonError('INVALID_RESPONSE', `the daemon answered HTTP ${status} without a JSON body`, status);
  }
  return { status, text, body };
}

function queryString(query: RequestOptions['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, value);
  const qs = params.toString();
  return qs ? `?${qs}` : '';
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function toDaemonError(status: number, text: string, body: unknown): DaemonError {
  const error = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  if (error && typeof error.code === 'string') {
    const suggestions = Array.isArray(error.suggestions) ? error.suggestions.filter((s): s is string => typeof s === 'string') : [];
    return new DaemonError(error.code, typeof error.message === 'string' ? error.message : '', status, suggestions);
  }
  const snippet = text.trim().split('\n', 1)[0]?.slice(0, 200);
  return new DaemonError(`HTTP_${status}`, snippet || 'the daemon answered with an error', status);
}

/**
 * undici reports every network failure as `TypeError: fetch failed` with the real reason in
 * `cause` (an AggregateError when both address families were tried), so dig it out.
 */
export function describeFetchError(err: unknown, timeoutMs: number): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
    return `no answer within ${timeoutMs} ms`;
  }
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth += 1) {
    const cause: unknown = current.cause ?? (current instanceof AggregateError ? current.errors[0] : undefined);
    if (!(cause instanceof Error)) break;
    current = cause;
  }
  if (current instanceof Error) {
    const code = (current as NodeJS.ErrnoException).code;
    if (current.message) return current.message;
    if (code) return code;
  }
  return err instanceof Error ? err.message : String(err);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
