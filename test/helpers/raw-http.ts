import { request } from 'node:http';
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One HTTP/1.1 request with exactly the headers given — `fetch` will not let a test set `Host`
 * — on its own connection (no keep-alive), so the answer is only about this request. An
 * upgrade answered with 101 resolves too, with the socket closed at once.
 */
export function rawRequest(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'GET',
        headers: { connection: 'close', ...options.headers },
        agent: false,
        setHost: options.headers?.host === undefined,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 101, headers: res.headers, body: '' });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

export interface RawAnswer extends RawResponse {
  /** How many bytes after `head` the client got out before the socket closed. */
  sent: number;
}

/**
 * A naive client on a raw socket: writes `head` (a request line and headers), then `bytes` more
 * in 64 KiB pieces — as chunked-encoding chunks with `framing: 'chunked'`, with the last chunk —
 * whatever the server answers meanwhile, reading all along. Resolves once the socket has closed
 * with the answer read to the end; rejects when there was none: the answer was lost.
 */
export function rawExchange(url: string, head: string, options: { bytes: number; framing?: 'raw' | 'chunked' }): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  const { bytes, framing = 'raw' } = options;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const received: Buffer[] = [];
    let sent = 0;
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    // EPIPE / ECONNRESET once the server has closed: expected, the answer is what matters.
    socket.on('error', () => {});
    socket.on('close', () => {
      const text = Buffer.concat(received).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split === -1) return reject(new Error(`no HTTP answer before the socket closed (sent ${sent} bytes): ${JSON.stringify(text)}`));
      const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      const length = Number(headers['content-length'] ?? NaN);
      const rest = text.slice(split + 4);
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: Number.isNaN(length) ? rest : rest.slice(0, length), sent });
    });
    socket.once('connect', () => {
      socket.write(head);
      const piece = Buffer.alloc(64 * 1024, 'x');
      const write = (): void => {
        while (sent < bytes && !socket.destroyed) {
          const size = Math.min(piece.length, bytes - sent);
          const data = framing === 'raw' ? piece.subarray(0, size) : Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), piece.subarray(0, size), Buffer.from('\r\n')]);
          sent += size;
          if (!socket.write(data)) return void socket.once('drain', write);
        }
        if (framing === 'chunked' && !socket.destroyed) socket.write('0\r\n\r\n');
      };
      write();
    });
  });
}
