import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { Agent, request, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { tempDir, type Cleanup } from '../helpers/process.js';
import { rawExchange } from '../helpers/raw-http.js';
import { spawnServe } from '../helpers/serve-process.js';

/**
 * Issue #35 item 4, against real `switchboard serve` processes: a WebSocket handshake on `/events`
 * that is refused — a foreign Host or Origin, no key, a wrong key, an invalid `since` — reaches
 * every client whole: its status, its JSON error body and `Connection: close`, then a graceful
 * close. The main client is Node's `http.request` on a keep-alive agent (as the global agent is),
 * which writes a WebSocket frame right behind its request, as an eager client does: answered
 * `keep-alive`, the agent sent the next request on a socket the daemon was closing (ECONNRESET in
 * 40 of 40 tries). A raw client that goes on sending a megabyte covers the graceful close: a socket
 * destroyed with bytes unread (as @fastify/websocket did after a bad `since`) was reset under the
 * answer. The `ws` client sees the same answers.
 */

const TOKEN = 'refused-upgrade-token';
const TRIES = 100;
/** Tries in flight at once: the next batch finds the agent's pool full of the last one's sockets. */
const AT_ONCE = 25;

const UPGRADE = {
  connection: 'Upgrade',
  upgrade: 'websocket',
  'sec-websocket-version': '13',
  'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
};

/** A masked text frame, "hello": what a client that does not wait for the 101 sends next. */
const FRAME = Buffer.from([0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]);

interface Answer {
  status: number;
  connection: string | undefined;
  code: string | undefined;
}

const cleanups: Array<() => void | Promise<void>> = [];
const cleanup: Cleanup = (fn) => void cleanups.push(fn);

async function startServe(config: Record<string, unknown>): Promise<string> {
  const dir = await tempDir(cleanup);
  const path = join(dir, 'switchboard.json');
  await writeFile(path, JSON.stringify({ dbPath: join(dir, 'cache.db'), port: 0, ...config }));
  return spawnServe(['--config', path], { home: dir, cwd: dir }, cleanup).listening();
}

function codeOf(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}

async function answerOf(res: IncomingMessage): Promise<Answer> {
  let body = '';
  res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
  await once(res, 'end');
  return { status: res.statusCode ?? 0, connection: res.headers.connection, code: codeOf(body) };
}

/** One handshake through `agent`, a frame written right behind it; an error is reported as its code. */
function upgradeOnce(url: string, path: string, headers: Record<string, string>, agent: Agent): Promise<Answer | string> {
  return new Promise((resolve) => {
    const target = new URL(path, url);
    const req = request(target, { agent, headers: { ...UPGRADE, ...headers }, setHost: headers.host === undefined });
    req.once('response', (res) => void answerOf(res).then(resolve, (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message)));
    req.once('upgrade', (_res, socket: Socket) => {
      socket.destroy();
      resolve('upgraded');
    });
    req.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.once('socket', (socket: Socket) => {
      const write = (): void => void socket.write(FRAME);
      if (socket.connecting) socket.once('connect', write);
      else write();
    });
    req.end();
  });
}

/** The `ws` client's view of a refused handshake. */
async function wsAnswer(url: string, path: string, options: { headers?: Record<string, string>; origin?: string }): Promise<Answer> {
  const ws = new WebSocket(new URL(path, url.replace(/^http/, 'ws')), options);
  ws.on('error', () => undefined);
  const [, res] = (await once(ws, 'unexpected-response')) as [unknown, IncomingMessage];
  return answerOf(res);
}

describe('a refused WebSocket upgrade of /events', () => {
  let open: string;
  let guarded: string;

  afterAll(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  beforeAll(async () => {
    [open, guarded] = await Promise.all([startServe({}), startServe({ token: TOKEN })]);
  }, 60_000);

  const cases: Array<{ name: string; daemon: () => string; path: string; headers: Record<string, string>; status: number; code: string }> = [
    { name: 'bad Host', daemon: () => open, path: '/events', headers: { host: 'evil.example' }, status: 403, code: 'FORBIDDEN_HOST' },
    { name: 'bad Origin', daemon: () => open, path: '/events', headers: { origin: 'http://evil.example' }, status: 403, code: 'FORBIDDEN_ORIGIN' },
    { name: 'no key', daemon: () => guarded, path: '/events', headers: {}, status: 401, code: 'UNAUTHORIZED' },
    { name: 'wrong key', daemon: () => guarded, path: '/events', headers: { authorization: 'Bearer not-the-key' }, status: 401, code: 'UNAUTHORIZED' },
    // Refused by the route itself, after @fastify/websocket has taken the request as its own.
    { name: 'bad since', daemon: () => open, path: '/events?since=x', headers: {}, status: 400, code: 'VALIDATION_FAILED' },
  ];

  it.each(cases)(
    `$name: ${TRIES} of ${TRIES} Node http.request clients (keep-alive agent, a frame right behind the request) read the status, the body and Connection: close`,
    async ({ daemon, path, headers, status, code }) => {
      const agent = new Agent({ keepAlive: true, maxSockets: AT_ONCE });
      try {
        const answers: Array<Answer | string> = [];
        for (let first = 0; first < TRIES; first += AT_ONCE) {
          answers.push(...(await Promise.all(Array.from({ length: AT_ONCE }, () => upgradeOnce(daemon(), path, headers, agent)))));
        }
        const tally = new Map<string, number>();
        for (const answer of answers) {
          const key = typeof answer === 'string' ? answer : `${answer.status} ${answer.code} connection: ${answer.connection}`;
          tally.set(key, (tally.get(key) ?? 0) + 1);
        }
        expect(Object.fromEntries(tally)).toEqual({ [`${status} ${code} connection: close`]: TRIES });
      } finally {
        agent.destroy();
      }
    },
  );

  it.each(cases)(
    '$name: a raw client that goes on sending a megabyte after its request reads the status and the body (20 times)',
    async ({ daemon, path, headers, status, code }) => {
      const { port } = new URL(daemon());
      const head = `GET ${path} HTTP/1.1\r\n${Object.entries({ host: `127.0.0.1:${port}`, ...UPGRADE, ...headers })
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('')}\r\n`;
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          rawExchange(daemon(), head, { bytes: 1024 * 1024 }).then(
            (a) => `${a.status} ${codeOf(a.body)} connection: ${a.headers.connection}`,
            (err: Error) => err.message,
          ),
        ),
      );
      expect(answers).toEqual(Array(20).fill(`${status} ${code} connection: close`));
    },
  );

  it.each(cases)('$name: the ws client reads the status and the body', async ({ daemon, path, headers, status, code }) => {
    const { origin, ...rest } = headers;
    const answers = await Promise.all(Array.from({ length: 10 }, () => wsAnswer(daemon(), path, { headers: rest, ...(origin ? { origin } : {}) })));
    expect(answers).toEqual(Array(10).fill({ status, connection: 'close', code }));
  });
});
