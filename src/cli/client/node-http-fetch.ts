import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/**
 * The part of a `fetch` answer the daemon client reads. A real `fetch` satisfies it (tests pass
 * one in); the CLI's default is `nodeHttpFetch` below.
 */
export interface HttpAnswer {
  status: number;
  headers: { get(name: string): string | null };
  /** The body as it arrives (a web stream from `fetch`, the `IncomingMessage` here). */
  body: unknown;
  text(): Promise<string>;
}

export interface HttpRequestInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export type FetchLike = (url: string, init: HttpRequestInit) => Promise<HttpAnswer>;

/**
 * One request over `node:http` (or `node:https`). A client command makes one or two requests and
 * exits: Node's `fetch` would first load undici and its WebAssembly HTTP parser, about 100 ms of
 * CPU per command on the 2-core box (issue #44), which `node:http` does not need. The signal
 * aborts the request and its body, as `fetch`'s does; network failures reject with Node's own
 * error (`connect ECONNREFUSED …`), which `describeFetchError` reads as it reads undici's cause.
 */
export const nodeHttpFetch: FetchLike = (url, init) =>
  new Promise((resolve, reject) => {
    const target = new URL(url);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const headers = init.body === undefined ? init.headers : { ...init.headers, 'content-length': String(Buffer.byteLength(init.body)) };
    const req = send(target, { method: init.method, headers, ...(init.signal ? { signal: init.signal } : {}) }, (res) => resolve(answerOf(res)));
    req.once('error', reject);
    req.end(init.body);
  });

function answerOf(res: IncomingMessage): HttpAnswer {
  return {
    status: res.statusCode ?? 0,
    headers: {
      get: (name) => {
        const value = res.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
      },
    },
    body: res,
    text: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}
