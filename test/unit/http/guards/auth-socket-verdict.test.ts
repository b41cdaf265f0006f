import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { AgentRef, Authentication } from '../../../../src/gateway/index.js';
import { createAuthHook, type KeyCheck } from '../../../../src/http/guards/auth.js';

/**
 * Issue #44 item 4: a keep-alive connection's accepted key verdict stays with its socket — a real
 * fastify server, a real keep-alive client on one socket, a counting key check — and stops the
 * moment the registry's generation changes (a key revoked) or the agent may no longer act.
 */

const AGENT_KEY = 'sbk_agent_key';
const OPERATOR_KEY = 'operator-key';

class CountingKeys implements KeyCheck {
  readonly keysRequired = true;
  readonly isLoaded = true;
  readonly loaded = Promise.resolve();
  authGeneration = 0;
  authentications = 0;
  revoked = false;
  active = true;
  readonly agent: AgentRef = { name: 'reader' };

  authenticate(presented: string): Authentication {
    this.authentications++;
    if (presented === OPERATOR_KEY) return { kind: 'operator' };
    if (presented === AGENT_KEY) return this.revoked ? { kind: 'revoked' } : { kind: 'agent', agent: this.agent };
    return { kind: 'unknown' };
  }

  isActive(): boolean {
    return this.active;
  }
}

async function serve(keys: KeyCheck): Promise<(key: string) => Promise<{ status: number; who: string }>> {
  const app = Fastify();
  app.decorateRequest('agent', undefined);
  app.addHook('onRequest', createAuthHook({ keys, agentRoutes: ['/who'] }));
  app.get('/who', (req) => ({ who: req.agent?.name ?? 'operator' }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  onTestFinished(async () => {
    agent.destroy();
    await app.close();
  });
  const { port } = app.server.address() as AddressInfo;
  const sockets = new Set<unknown>();
  const ask = (key: string): Promise<{ status: number; who: string }> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/who', agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
        sockets.add(res.socket);
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, who: (JSON.parse(body) as { who?: string }).who ?? body }));
      });
      req.on('error', reject);
      req.end();
    });
  onTestFinished(() => expect(sockets.size).toBe(1)); // every request of a test on one connection
  return ask;
}

describe('the auth verdict of a keep-alive connection', () => {
  it('is judged once while the connection presents the same key', async () => {
    const keys = new CountingKeys();
    const ask = await serve(keys);
    for (let i = 0; i < 3; i++) expect(await ask(AGENT_KEY)).toEqual({ status: 200, who: 'reader' });
    expect(keys.authentications).toBe(1);
    // Another key on the same connection is judged afresh, and then kept in turn.
    expect(await ask(OPERATOR_KEY)).toEqual({ status: 200, who: 'operator' });
    expect(await ask(OPERATOR_KEY)).toEqual({ status: 200, who: 'operator' });
    expect(keys.authentications).toBe(2);
  });

  it('stops at once when a key is revoked (the generation changes), on the same connection', async () => {
    const keys = new CountingKeys();
    const ask = await serve(keys);
    expect((await ask(AGENT_KEY)).status).toBe(200);
    keys.revoked = true;
    keys.authGeneration++;
    expect((await ask(AGENT_KEY)).status).toBe(401);
    expect(keys.authentications).toBe(2);
  });

  it('is judged afresh once the agent may no longer act (expired)', async () => {
    const keys = new CountingKeys();
    const ask = await serve(keys);
    expect((await ask(AGENT_KEY)).status).toBe(200);
    keys.active = false;
    keys.revoked = true;
    expect((await ask(AGENT_KEY)).status).toBe(401);
    expect(keys.authentications).toBe(2);
  });
});
