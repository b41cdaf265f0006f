import { InMemoryTransport } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { AgentServerOptions } from '../../../../src/http/endpoint/agent-server-options.js';
import { ModernServers } from '../../../../src/http/endpoint/modern-servers.js';

/** Just what building a server reads: the aggregate capabilities. */
function optionsWith(capabilities: { prompts: boolean }): AgentServerOptions {
  return { manager: { capabilities: () => ({ ...capabilities }) } } as unknown as AgentServerOptions;
}

/** One exchange as the SDK's handler runs it: connect to a fresh transport, then close. */
async function serveOnce(server: ReturnType<ModernServers['take']>): Promise<void> {
  const [ours] = InMemoryTransport.createLinkedPair();
  await server.connect(ours);
  await server.close();
}

describe('ModernServers (issue #27: no Server built per 2026-07-28 request)', () => {
  it('hands out the same instance again once its exchange has closed, and a second one while the first serves', async () => {
    const pool = new ModernServers(optionsWith({ prompts: false }));
    const first = pool.take(undefined);
    const [ours] = InMemoryTransport.createLinkedPair();
    await first.connect(ours);
    const second = pool.take(undefined);
    expect(second).not.toBe(first);
    await first.close();
    expect(first.transport).toBeUndefined();
    expect(pool.take(undefined)).toBe(first);
  });

  it('never hands out one instance twice, even when it closes twice', async () => {
    const pool = new ModernServers(optionsWith({ prompts: false }));
    const server = pool.take(undefined);
    await serveOnce(server);
    server.onclose?.();
    expect(pool.idle).toBe(1);
    expect(pool.take(undefined)).toBe(server);
    expect(pool.take(undefined)).not.toBe(server);
  });

  it('retires the idle instances when the aggregate capabilities change', async () => {
    const capabilities = { prompts: false };
    const pool = new ModernServers(optionsWith(capabilities));
    const before = pool.take(undefined);
    await serveOnce(before);
    capabilities.prompts = true;
    const after = pool.take(undefined);
    expect(after).not.toBe(before);
    expect(after.getCapabilities().prompts).toEqual({ listChanged: true });
  });

  it('keeps at most maxIdle instances', async () => {
    const pool = new ModernServers(optionsWith({ prompts: false }), 2);
    const servers = [pool.take(undefined), pool.take(undefined), pool.take(undefined)];
    for (const server of servers) await serveOnce(server);
    expect(pool.idle).toBe(2);
  });
});
