import { connect } from 'node:net';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { BODY_LIMIT } from '../../src/http/app.js';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir, waitForFile } from '../helpers/process.js';

/*
 * A body over the limit is refused before it is read, and the refusal must reach the client:
 * the server answers while the client is still sending, then closes a socket with unread data
 * (a TCP reset). These tests use a raw socket that keeps writing the whole body, the way a naive
 * client does, and must still read a JSON answer rather than only a reset.
 */

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** How many body bytes the client got out before the server closed the socket. */
  sent: number;
}

/** POSTs `bytes` of JSON-ish body through a raw socket, writing on whatever happens, reading all along. */
function postOversized(url: string, path: string, bytes: number, framing: 'length' | 'chunked'): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
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
      const framingHeader = framing === 'length' ? `content-length: ${bytes}` : 'transfer-encoding: chunked';
      socket.write(`POST ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\n${framingHeader}\r\n\r\n`);
      const piece = Buffer.alloc(64 * 1024, 'x');
      const write = (): void => {
        while (sent < bytes && !socket.destroyed) {
          const size = Math.min(piece.length, bytes - sent);
          const data = framing === 'length' ? piece.subarray(0, size) : Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), piece.subarray(0, size), Buffer.from('\r\n')]);
          sent += size;
          if (!socket.write(data)) return void socket.once('drain', write);
        }
        if (framing === 'chunked' && !socket.destroyed) socket.write('0\r\n\r\n');
      };
      write();
    });
  });
}

describe('a request body over the limit', () => {
  it.each(['length', 'chunked'] as const)('gets its 413 JSON answer before the socket closes (%s framing)', async (framing) => {
    const sb = await startDaemon();
    for (const bytes of [BODY_LIMIT + 1024 * 1024, 16 * BODY_LIMIT]) {
      const answer = await postOversized(sb.url, '/tools/mcp_x_y/call', bytes, framing);
      expect(answer.status, `${bytes} bytes`).toBe(413);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body)).toEqual({ error: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large' } });
    }
    // The daemon is none the worse for it.
    expect((await sb.fetch('/health')).status).toBe(200);
  });

  it('during the shutdown drain gets its 503 SHUTTING_DOWN answer the same way', async () => {
    const dir = await tempDir();
    const sb = await startDaemon({ servers: { slow: fixtureServerConfig('slow-tool') } });
    const [release, started] = [join(dir, 'release'), join(dir, 'started')];
    const call = sb.json('/tools/mcp_slow_slow/call', { method: 'POST', body: { arguments: { durationMs: 0, untilFile: release, startedFile: started } } });
    await waitForFile(started);
    const closing = sb.close();

    const answer = await postOversized(sb.url, '/tools/mcp_slow_slow/call', 2 * BODY_LIMIT, 'length');
    expect(answer.status).toBe(503);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'SHUTTING_DOWN' } });

    await writeFile(release, 'go');
    expect((await call).status).toBe(200);
    await closing;
  });
});
