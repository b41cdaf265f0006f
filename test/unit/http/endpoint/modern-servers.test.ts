import { InMemoryTransport } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { AgentServerOptions } from '../../../../src/http/endpoint/agent-server-options.js';
import { ModernServers } from '../../../../src/http/endpoint/modern-servers.js';
import { authOf } from '../../../../src/http/endpoint/request-agent.js';

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
    const first = pool.take();
    const [ours] = InMemoryTransport.createLinkedPair();
    await first.connect(ours);
    const second = pool.take();
    expect(second).not.toBe(first);
    await first.close();
    expect(first.transport).toBeUndefined();
    expect(pool.take()).toBe(first);
  });

  it('never hands out one instance twice, even when it closes twice', async () => {
    const pool = new ModernServers(optionsWith({ prompts: false }));
    const server = pool.take();
    await serveOnce(server);
    server.onclose?.();
    expect(pool.idle).toBe(1);
    expect(pool.take()).toBe(server);
    expect(pool.take()).not.toBe(server);
  });

  it('retires the idle instances when the aggregate capabilities change', async () => {
    const capabilities = { prompts: false };
    const pool = new ModernServers(optionsWith(capabilities));
    const before = pool.take();
    await serveOnce(before);
    capabilities.prompts = true;
    const after = pool.take();
    expect(after).not.toBe(before);
    expect(after.getCapabilities().prompts).toEqual({ listChanged: true });
  });

  it('keeps at most maxIdle instances', async () => {
    const pool = new ModernServers(optionsWith({ prompts: false }), 2);
    const servers = [pool.take(), pool.take(), pool.take()];
    for (const server of servers) await serveOnce(server);
    expect(pool.idle).toBe(2);
  });
});

describe('the caller of a 2026-07-28 request (issue #34 item 5.4)', () => {
  it("is read from each request's authInfo: one reused instance answers two agents and the operator each with their own list", async () => {
    const options = {
      manager: { capabilities: () => ({}), instanceAd: () => ({}) },
      runtime: { state: 'ready' },
      modes: { tools: (caller?: { name: string }) => [{ name: `for_${caller?.name ?? 'operator'}`, inputSchema: { type: 'object' } }] },
      gateway: { countDefinitions: async () => undefined },
    } as unknown as AgentServerOptions;
    const pool = new ModernServers(options);
    const server = pool.take();
    const [ours, theirs] = InMemoryTransport.createLinkedPair();
    const answers = new Map<unknown, unknown>();
    theirs.onmessage = (message) =>
      void answers.set(
        (message as { id?: unknown }).id,
        (message as { result?: { tools: Array<{ name: string }> } }).result?.tools.map((t) => t.name),
      );
    await server.connect(ours);
    await theirs.start();
    const asks: Array<[number, string | undefined]> = [
      [1, 'alpha'],
      [2, undefined],
      [3, 'beta'],
    ];
    for (const [id, agent] of asks) {
      await theirs.send({ jsonrpc: '2.0', id, method: 'tools/list', params: {} }, agent ? { authInfo: authOf({ name: agent }) } : {});
    }
    await expect.poll(() => answers.size).toBe(3);
    expect([...answers]).toEqual([
      [1, ['for_alpha']],
      [2, ['for_operator']],
      [3, ['for_beta']],
    ]);
    await server.close();
  });
});
