import { connect, type Socket } from 'node:net';

/**
 * A minimal keep-alive HTTP/1.1 GET client over one TCP socket, for multi-megabyte bodies in a
 * timed loop (B4). It reads into one preallocated buffer (`net.connect({ onread })`) and only
 * counts body bytes: node:http's client spends 2–20 ms of CPU per 1.8 MB body (per-read buffers,
 * stream machinery, and GC that depends on everything else the bench process did before), which
 * dwarfed the daemon's ~1 ms and made the figure bimodal. Supports what the daemon sends to a
 * GET: a status line, headers, and a `content-length` body (or none, for 304). Anything else
 * (chunked encoding, a closed connection) fails the request.
 */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  /** Body bytes received (not kept). */
  bytes: number;
}

export interface RawHttpClient {
  get(path: string, headers?: Record<string, string>): Promise<RawResponse>;
  close(): void;
}

const READ_BUFFER_BYTES = 1024 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');

export async function createRawHttpClient(baseUrl: string): Promise<RawHttpClient> {
  const url = new URL(baseUrl);
  const host = `${url.hostname}:${url.port}`;
  let pending: { resolve: (res: RawResponse) => void; reject: (err: Error) => void } | undefined;
  // Parser state for the response in flight.
  let head: Buffer[] = [];
  let response: RawResponse | undefined;
  let remaining = 0;

  const finish = (): void => {
    const done = pending;
    const res = response as RawResponse;
    pending = undefined;
    response = undefined;
    done?.resolve(res);
  };
  const fail = (err: Error): void => {
    const done = pending;
    pending = undefined;
    done?.reject(err);
  };

  const onData = (length: number, buffer: Buffer): void => {
    // `buffer` is reused for the next read: copy only what must outlive this callback (a head
    // split across reads).
    let chunk = buffer.subarray(0, length);
    while (chunk.length > 0) {
      if (!response) {
        const data = head.length === 0 ? chunk : Buffer.concat([...head, chunk]);
        const end = data.indexOf(HEAD_END);
        if (end === -1) {
          head = [head.length === 0 ? Buffer.from(chunk) : data];
          return;
        }
        head = [];
        try {
          response = parseHead(data.subarray(0, end).toString('latin1'));
        } catch (err) {
          return fail(err as Error);
        }
        if (response.headers['transfer-encoding']) return fail(new Error('raw-http: chunked bodies are not supported'));
        remaining = response.status === 304 || response.status === 204 ? 0 : Number(response.headers['content-length'] ?? 0);
        chunk = data.subarray(end + HEAD_END.length);
        if (remaining === 0) {
          finish();
          continue;
        }
      }
      const take = Math.min(remaining, chunk.length);
      (response as RawResponse).bytes += take;
      remaining -= take;
      chunk = chunk.subarray(take);
      if (remaining === 0) finish();
    }
  };

  const readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  const socket: Socket = connect({
    host: url.hostname,
    port: Number(url.port),
    noDelay: true,
    onread: {
      buffer: readBuffer,
      callback: (length) => {
        onData(length, readBuffer);
        return true;
      },
    },
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', (err) => fail(err));
  socket.on('close', () => fail(new Error('raw-http: connection closed')));

  return {
    get(path, headers = {}) {
      if (pending) return Promise.reject(new Error('raw-http: one request at a time'));
      return new Promise((resolve, reject) => {
        pending = { resolve, reject };
        const lines = [`GET ${path} HTTP/1.1`, `host: ${host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
        socket.write(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
      });
    },
    close: () => socket.destroy(),
  };
}

function parseHead(text: string): RawResponse {
  const [statusLine = '', ...lines] = text.split('\r\n');
  const status = Number(statusLine.split(' ')[1]);
  if (!Number.isInteger(status)) throw new Error(`raw-http: bad status line "${statusLine}"`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status, headers, bytes: 0 };
}
