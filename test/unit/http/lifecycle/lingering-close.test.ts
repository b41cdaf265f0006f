import { once } from 'node:events';
import { createServer } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LingeringClose, type LingerLimits } from '../../../../src/http/lifecycle/lingering-close.js';
import type { Clock } from '../../../../src/util/clock.js';
import { ManualClock } from '../../../helpers/manual-clock.js';

/*
 * The bounds of the lingering close (src/http/lifecycle/lingering-close.ts) on a plain Node HTTP
 * server that answers 413 without reading the body, as fastify's body limit does: a client that
 * goes on sending after our FIN is cut off after `maxBytes`, one that neither sends nor closes
 * after `maxMs`, and one that closes its side is let go at once. The clients keep their side open
 * after our FIN (allowHalfOpen), as a client that does not read would.
 */

/** The server side of one connection once it has closed: what it read. */
interface Closed {
  bytesRead: number;
}

async function refusingServer(limits: LingerLimits, clock?: Clock): Promise<{ port: number; closed: Promise<Closed> }> {
  const server = createServer((_request, response) => {
    response.writeHead(413, { 'content-type': 'text/plain', connection: 'close' }).end('too large');
  });
  new LingeringClose(limits, clock).install(server);
  const closed = new Promise<Closed>((resolve) =>
    server.once('connection', (socket: Socket) => {
      socket.once('close', () => resolve({ bytesRead: socket.bytesRead }));
    }),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  onTestFinished(() => {
    server.closeAllConnections();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, closed };
}

/**
 * A client that writes `head`, then `bytes` of body as fast as it can, reading all along.
 * `answer` resolves with what it read once our FIN came (the answer is written before it).
 */
function client(port: number, head: string, bytes: number): { socket: Socket; answer: Promise<string> } {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  onTestFinished(() => void socket.destroy());
  const received: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  // EPIPE / ECONNRESET once the server is gone: what it read before is what counts.
  socket.on('error', () => {});
  const answer = once(socket, 'end').then(() => Buffer.concat(received).toString('latin1'));
  socket.once('connect', () => {
    socket.write(head);
    let sent = 0;
    const piece = Buffer.alloc(64 * 1024, 'x');
    const write = (): void => {
      while (sent < bytes && !socket.destroyed) {
        const size = Math.min(piece.length, bytes - sent);
        sent += size;
        if (!socket.write(piece.subarray(0, size))) return void socket.once('drain', write);
      }
    };
    write();
  });
  return { socket, answer };
}

const MiB = 1024 * 1024;

describe('the lingering close', () => {
  it('reads and drops at most maxBytes after the answer, then closes', async () => {
    const { port, closed } = await refusingServer({ maxBytes: MiB, maxMs: 20_000 });
    const bytes = 64 * MiB;
    const { answer } = client(port, `POST / HTTP/1.1\r\nhost: x\r\ncontent-length: ${bytes}\r\n\r\n`, bytes);

    expect(await answer).toMatch(/^HTTP\/1\.1 413 [^]*too large/);
    const { bytesRead } = await closed;
    expect(bytesRead).toBeGreaterThan(MiB);
    // Cut off long before the client's 64 MiB: the limit, plus what was in flight.
    expect(bytesRead).toBeLessThan(9 * MiB);
  });

  it('gives up after maxMs on a client that neither sends nor closes', async () => {
    const maxMs = 300;
    const clock = new ManualClock();
    const { port, closed } = await refusingServer({ maxBytes: 64 * MiB, maxMs }, clock);
    let ended = false;
    void closed.then(() => (ended = true));
    const { answer } = client(port, 'POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n', 10);

    expect(await answer).toMatch(/^HTTP\/1\.1 413 /);
    // Our FIN is out and the linger's deadline set; the client keeps its side open.
    expect(clock.pendingDelays()).toEqual([maxMs]);
    clock.advance(maxMs - 1);
    await new Promise((resolve) => setImmediate(resolve));
    // It lingers (a plain close would have come at once), and not for ever: maxMs ends it.
    expect(ended).toBe(false);
    clock.advance(1);
    expect((await closed).bytesRead).toBeGreaterThan(0);
    expect(clock.pendingDelays()).toEqual([]);
  });

  it('closes as soon as the client has closed its side', async () => {
    // maxMs is past the test's timeout: only the client's FIN can end the linger in time.
    const { port, closed } = await refusingServer({ maxBytes: 64 * MiB, maxMs: 600_000 });
    const { socket, answer } = client(port, 'POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n', 10);

    expect(await answer).toMatch(/^HTTP\/1\.1 413 /);
    socket.end();
    expect((await closed).bytesRead).toBeGreaterThan(0);
  });
});
