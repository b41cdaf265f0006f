import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo, createMcpHandler } from '@modelcontextprotocol/server';

type McpHandler = ReturnType<typeof createMcpHandler>;

/** A 2026-07-28 request as `/mcp` hands it over: its body already parsed (fastify's JSON parser). */
export type ModernNodeHandler = (req: IncomingMessage, res: ServerResponse, parsedBody: unknown, authInfo?: AuthInfo) => Promise<void>;

/**
 * The SDK's modern handler (`createMcpHandler`) served from Node's own request and response
 * (issue #44), in place of `@modelcontextprotocol/node`'s `toNodeHandler`. The SDK still
 * classifies, validates and dispatches every request; only the crossing between Node and its
 * web-standard `fetch` face is ours, and it does the least the face allows:
 *
 * - The body is already parsed, and the SDK reads and clones nothing when it is handed
 *   `parsedBody`: the `Request` it gets carries the method, URL, headers and abort signal, no body
 *   (`toNodeHandler` serialised the parsed body back to text and measured it in bytes, per request).
 * - A JSON answer is read whole and written with its `Content-Length` in one `end()` — one write
 *   of headers and body — instead of chunk by chunk with the chunked encoding's terminator as a
 *   write of its own. An SSE answer (progress, questions, a `subscriptions/listen` stream) is
 *   streamed as it comes, with back-pressure, as before.
 * - The request's signal aborts when the response closes before the answer was written (the
 *   client went away): the SDK then cancels the handler's work.
 */
export function modernNodeHandler(handler: McpHandler, onerror: (err: Error) => void): ModernNodeHandler {
  return async (req, res, parsedBody, authInfo) => {
    let finished = false;
    const abort = new AbortController();
    res.once('close', () => {
      if (!finished) abort.abort();
    });
    let response: Response;
    try {
      response = await handler.fetch(webRequestOf(req, abort.signal), { ...(authInfo ? { authInfo } : {}), ...(parsedBody !== undefined ? { parsedBody } : {}) });
    } catch (err) {
      onerror(err instanceof Error ? err : new Error(String(err)));
      response = Response.json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: echoableId(parsedBody) }, { status: 500 });
    }
    try {
      await writeResponse(response, res, abort.signal);
    } finally {
      finished = true;
    }
  };
}

/** Headers, method, URL and signal: what the SDK's modern entry reads of a request whose body it is handed parsed. */
function webRequestOf(req: IncomingMessage, signal: AbortSignal): Request {
  const headers: [string, string][] = [];
  const raw = req.rawHeaders;
  // rawHeaders: repeats as they came (Headers joins them as a web client would see them).
  for (let i = 0; i < raw.length; i += 2) headers.push([raw[i]!, raw[i + 1]!]);
  const host = req.headers.host ?? 'localhost';
  return new Request(`http://${host}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, signal });
}

async function writeResponse(response: Response, res: ServerResponse, signal: AbortSignal): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  if (response.body === null) {
    res.writeHead(response.status, headers).end();
    return;
  }
  if (!isEventStream(headers['content-type'])) {
    const body = Buffer.from(await response.arrayBuffer());
    headers['content-length'] = String(body.byteLength);
    res.writeHead(response.status, headers).end(body);
    return;
  }
  res.writeHead(response.status, headers);
  await streamBody(response.body, res, signal);
  res.end();
}

async function streamBody(body: ReadableStream<Uint8Array>, res: ServerResponse, signal: AbortSignal): Promise<void> {
  const closed = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  let onDrain: (() => void) | undefined;
  try {
    for await (const chunk of body) {
      if (signal.aborted) break;
      if (res.write(chunk)) continue;
      await Promise.race([new Promise<void>((resolve) => res.once('drain', (onDrain = resolve))), closed]);
      if (onDrain) res.off('drain', onDrain);
    }
  } catch {
    // The stream failed or was cancelled: the response ends with what was sent.
  }
}

function isEventStream(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.toLowerCase().startsWith('text/event-stream');
}

/** A request's id as a JSON-RPC error may echo it (a request with a string or number id). */
function echoableId(body: unknown): string | number | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const { method, id } = body as { method?: unknown; id?: unknown };
  return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number') ? id : null;
}
