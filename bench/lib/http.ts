import { Agent, request, type IncomingHttpHeaders } from 'node:http';

/**
 * A minimal keep-alive HTTP/1.1 client over node:http. Global fetch (undici) costs several
 * hundred microseconds of its own per request in Node 20, which would be charged to the daemon;
 * a keep-alive `http.Agent` adds little and needs no dependency.
 */
export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface RequestInit {
  body?: Buffer | string;
  headers?: Record<string, string>;
}

export interface HttpClient {
  request(method: string, path: string, init?: RequestInit): Promise<HttpResponse>;
  get(path: string, headers?: Record<string, string>): Promise<HttpResponse>;
  /** POSTs a JSON body; pass a pre-serialised Buffer to keep serialisation out of a timed loop. */
  postJson(path: string, body: Buffer | string | object): Promise<HttpResponse>;
  close(): void;
}

export function createHttpClient(baseUrl: string, options: { connections?: number } = {}): HttpClient {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections ?? 1, scheduling: 'fifo' });

  const send: HttpClient['request'] = (method, path, init = {}) =>
    new Promise((resolve, reject) => {
      const body = init.body;
      const headers: Record<string, string | number> = { ...init.headers };
      if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
      const req = request({ agent, host: url.hostname, port: url.port, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
          }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });

  return {
    request: send,
    get: (path, headers) => send('GET', path, headers ? { headers } : {}),
    postJson: (path, body) =>
      send('POST', path, {
        body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      }),
    close: () => agent.destroy(),
  };
}

/** Throws unless the response has `status`; the message carries the body for diagnosis. */
export function expectStatus(response: HttpResponse, status: number, what: string): HttpResponse {
  if (response.status !== status) {
    throw new Error(`${what}: expected HTTP ${status}, got ${response.status}: ${response.body.toString('utf8').slice(0, 500)}`);
  }
  return response;
}
