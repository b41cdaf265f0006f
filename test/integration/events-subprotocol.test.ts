import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { WebSocket } from 'ws';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BEARER_PROTOCOL_PREFIX, EVENTS_SUBPROTOCOL } from '../../src/http/guards/auth.js';
import { OPERATOR_TOKEN } from '../helpers/agents.js';
import { startDaemon } from '../helpers/daemon.js';

/**
 * `/events` takes the key inside the WebSocket subprotocol list (what the dashboard does: a
 * browser cannot set headers on the handshake, and a key in the URL would reach logs).
 */

const offer = (key: string): string[] => [EVENTS_SUBPROTOCOL, BEARER_PROTOCOL_PREFIX + Buffer.from(key).toString('base64url')];

async function handshake(url: string, protocols: string[]): Promise<{ status: number; protocol?: string; hello?: { type: string } }> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/events`, protocols);
  onTestFinished(() => ws.terminate());
  const outcome = await Promise.race([
    once(ws, 'message').then(([data]) => ({ status: 101, protocol: ws.protocol, hello: JSON.parse(String(data)) as { type: string } })),
    once(ws, 'unexpected-response').then(([, response]) => ({ status: (response as IncomingMessage).statusCode ?? 0 })),
  ]);
  return outcome;
}

describe('/events key in the subprotocol list', () => {
  it('opens with the right key, answering only with the events subprotocol', async () => {
    const d = await startDaemon({ config: { token: OPERATOR_TOKEN } });
    const opened = await handshake(d.url, offer(OPERATOR_TOKEN));
    expect(opened).toMatchObject({ status: 101, protocol: EVENTS_SUBPROTOCOL, hello: { type: 'hello' } });
  });

  it('refuses a wrong key, and no key, with 401', async () => {
    const d = await startDaemon({ config: { token: OPERATOR_TOKEN } });
    expect((await handshake(d.url, offer('wrong'))).status).toBe(401);
    expect((await handshake(d.url, [EVENTS_SUBPROTOCOL])).status).toBe(401);
  });

  it('needs no key where none exists, and picks the events subprotocol', async () => {
    const d = await startDaemon();
    expect(await handshake(d.url, [EVENTS_SUBPROTOCOL])).toMatchObject({ status: 101, protocol: EVENTS_SUBPROTOCOL });
  });
});
