import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { addAgentKey } from '../helpers/agents.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir, waitForFile } from '../helpers/process.js';

/**
 * Issue #22 item 5: a per-agent token bucket and concurrency cap, over a real daemon with a real
 * upstream: 429 + Retry-After on REST, the same code on `/mcp`, and each refusal audited.
 */

const TOKEN = 'operator-secret-token-0123456789';

async function callAs(d: TestDaemon, key: string, tool: string, args: Record<string, unknown>): Promise<Response> {
  return fetch(`${d.url}/tools/${tool}/call`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: args }),
  });
}

describe('per-agent limits', () => {
  it('a rate limit answers 429 AGENT_RATE_LIMITED with Retry-After on REST and the same code on /mcp; other agents are not affected', async () => {
    const d = await startDaemon({ servers: { echo: fixtureServerConfig('echo-stdio') }, config: { token: TOKEN } });
    // One token a minute after a burst of two: the third request in a row is over.
    const limited = await addAgentKey(d, { name: 'limited', rateLimit: { perMinute: 1, burst: 2 } });
    const free = await addAgentKey(d, { name: 'free' });

    for (let i = 0; i < 2; i++) expect((await callAs(d, limited, 'mcp_echo_echo', { text: `hi ${i}` })).status).toBe(200);
    const refused = await callAs(d, limited, 'mcp_echo_echo', { text: 'over' });
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await refused.json()).toMatchObject({ error: { code: 'AGENT_RATE_LIMITED' } });
    expect((await callAs(d, free, 'mcp_echo_echo', { text: 'fine' })).status).toBe(200);

    // The same agent over /mcp: a JSON-RPC error carrying the code and the wait.
    const client = new Client({ name: 'limited-agent', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${limited}` } } });
    await client.connect(transport);
    onTestFinished(() => client.close());
    const error = await client.callTool({ name: 'mcp_echo_echo', arguments: { text: 'over mcp' } }).then(
      () => undefined,
      (err: unknown) => err as { data?: { code?: string; retryAfterMs?: number } },
    );
    expect(error?.data?.code).toBe('AGENT_RATE_LIMITED');
    expect(error?.data?.retryAfterMs).toBeGreaterThan(0);

    const audit = await d.json<{ entries: Array<{ agent?: string; outcome: string; code?: string }> }>('/audit?agent=limited');
    expect(audit.body.entries.filter((e) => e.outcome === 'denied' && e.code === 'AGENT_RATE_LIMITED')).toHaveLength(2);
    expect(audit.body.entries.filter((e) => e.outcome === 'ok')).toHaveLength(2);
  });

  it('a concurrency cap answers 429 AGENT_BUSY while the agent has that many calls in flight, and frees the slot when one ends', async () => {
    const dir = await tempDir();
    const d = await startDaemon({ servers: { slow: fixtureServerConfig('slow-tool'), echo: fixtureServerConfig('echo-stdio') }, config: { token: TOKEN } });
    const key = await addAgentKey(d, { name: 'single', maxConcurrentCalls: 1 });
    const [release, started] = [join(dir, 'release'), join(dir, 'started')];

    const first = callAs(d, key, 'mcp_slow_slow', { durationMs: 0, untilFile: release, startedFile: started });
    await waitForFile(started);
    const busy = await callAs(d, key, 'mcp_echo_echo', { text: 'second' });
    expect(busy.status).toBe(429);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(await busy.json()).toMatchObject({ error: { code: 'AGENT_BUSY' } });
    // The operator is not an agent: no cap.
    expect((await d.json('/tools/mcp_echo_echo/call', { method: 'POST', body: { arguments: { text: 'operator' } } })).status).toBe(200);

    await writeFile(release, 'go');
    expect((await first).status).toBe(200);
    expect((await callAs(d, key, 'mcp_echo_echo', { text: 'third' })).status).toBe(200);
  });
});
