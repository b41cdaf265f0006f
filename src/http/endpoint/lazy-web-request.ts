import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The web `Request` a handler may read as `ctx.http.req` (the SDK hands it over as is), built only
 * when something reads it (issue #44: building one per request — its URL, `Headers` and abort
 * signal — was a tenth of a 2026-07-28 call; our handlers read it only for an approval page's URL).
 * Until then it is a stand-in that answers `instanceof Request`; its first property read builds the
 * real one, body-less (the body was parsed already), whose signal aborts if the client goes away
 * before the answer is written.
 */
export function lazyWebRequest(req: IncomingMessage, res: ServerResponse): Request {
  let built: Request | undefined;
  const real = (): Request => (built ??= webRequestOf(req, res));
  return new Proxy(Object.create(Request.prototype) as Request, {
    get: (_target, property) => {
      const request = real();
      const value: unknown = Reflect.get(request, property, request);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(request) : value;
    },
    has: (_target, property) => property in real(),
  });
}

/** Headers, method, URL and signal: a request whose body was read and parsed already. */
function webRequestOf(req: IncomingMessage, res: ServerResponse): Request {
  const abort = new AbortController();
  if (res.writableFinished || res.destroyed) abort.abort();
  else res.once('close', () => res.writableFinished || abort.abort());
  const headers: [string, string][] = [];
  const raw = req.rawHeaders;
  // rawHeaders: repeats as they came (Headers joins them as a web client would see them).
  for (let i = 0; i < raw.length; i += 2) headers.push([raw[i]!, raw[i + 1]!]);
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, signal: abort.signal });
}
