import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { DaemonConfigInput } from '../../src/config/schema.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { cutOff, freshDatabaseUrl, postgresStores } from '../helpers/pg-stores.js';
import { tempDir } from '../helpers/process.js';

/**
 * Issue #38 item 4: token budgets per agent, over real daemons and the real `big-results`
 * fixture. An agent with 50 000 tokens an hour is refused once it has been handed them (results
 * after the guard count), with the reset time; another agent is not; on two replicas sharing one
 * PostgreSQL store the budget is one. The daemons' clocks are manual and start at 12:10 UTC, so
 * the hour's reset (13:00) is exact.
 */

const TOKEN = 'operator-secret-token-0123456789';
const CAPPED = 'sbk_capped-agent-key-0123456789abcdef';
const FREE = 'sbk_free-agent-key-0123456789abcdef';
const LISTER = 'sbk_lister-agent-key-0123456789abcdef';
const START = Date.parse('2026-12-05T12:10:00Z');
const config: Partial<DaemonConfigInput> = {
  token: TOKEN,
  health: false,
  agents: { capped: { key: CAPPED, budget: { tokensPerHour: 50_000 } }, free: { key: FREE }, lister: { key: LISTER, budget: { tokensPerDay: 1_000_000 } } },
};
const servers = { big: fixtureServerConfig('big-results') };

async function call(d: TestDaemon, key: string, chars = 100_000): Promise<Response> {
  return fetch(`${d.url}/tools/mcp_big_log_lines/call`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: { chars } }),
  });
}

/** Calls as `key` until refused (at most `most` calls); the refusal. */
async function spendAll(d: TestDaemon, key: string, most: number): Promise<{ calls: number; refused: Response }> {
  for (let calls = 0; calls < most; calls += 1) {
    const res = await call(d, key);
    if (res.status !== 200) return { calls, refused: res };
    await res.arrayBuffer();
  }
  throw new Error(`still answered after ${most} calls`);
}

/**
 * Two daemons on the PostgreSQL stores at `url`, started together. While the database is away
 * their stores probe it every 200 ms instead of 2 s: what is tested is what A does once it is
 * back, not how soon it looks.
 */
async function twoReplicas(url: string): Promise<[TestDaemon, TestDaemon]> {
  const replica = async (name: string) =>
    startDaemon({
      servers,
      config: { ...config, dbPath: join(await tempDir(), `${name}.db`) },
      deps: { clock: new ManualClock(START), stores: await postgresStores({ url, probeIntervalMs: 200 }) },
    });
  return Promise.all([replica('a'), replica('b')]);
}

describe('token budgets per agent', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon({ servers, config, deps: { clock: new ManualClock(START) }, lifetime: 'manual' });
  });
  afterAll(() => d.close());

  it('refuses an agent over 50 000 tokens an hour with BUDGET_EXCEEDED and the reset (429 + Retry-After; data.code on /mcp); lists still answer; another agent is not affected', async () => {
    // Each result is cut to 25 000 tokens: the budget is spent after two.
    const { calls, refused } = await spendAll(d, CAPPED, 4);
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('3000');
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('BUDGET_EXCEEDED');
    expect(body.error.message).toContain('resets at 2026-12-05T13:00:00.000Z');
    expect((await call(d, FREE)).status).toBe(200);

    const client = new Client({ name: 'capped', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', d.url), { requestInit: { headers: { authorization: `Bearer ${CAPPED}` } } }));
    onTestFinished(() => client.close());
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('mcp_big_small');
    const error = await client.callTool({ name: 'mcp_big_small', arguments: {} }).then(
      () => undefined,
      (err: unknown) => err as { data?: { code?: string; retryAfterMs?: number } },
    );
    expect(error?.data).toEqual({ code: 'BUDGET_EXCEEDED', retryAfterMs: 3_000_000 });

    const agents = await d.json<{ agents: Array<{ name: string; spent?: { hour: { limit: number; spent: number; left: number; resetsAt: string } } }> }>('/agents');
    const capped = agents.body.agents.find((agent) => agent.name === 'capped');
    expect(capped?.spent?.hour).toMatchObject({ limit: 50_000, left: 0, resetsAt: '2026-12-05T13:00:00.000Z' });
    expect(capped?.spent?.hour.spent).toBeGreaterThanOrEqual(50_000);
    expect(agents.body.agents.find((agent) => agent.name === 'free')?.spent).toBeUndefined();
    const metrics = await (await d.fetch('/metrics')).text();
    expect(metrics).toMatch(/^switchboard_agent_budget_tokens_left\{agent="capped",window="hour"\} 0$/m);
  });

  it('counts the tool definitions an agent is handed: GET /tools, /mcp tools/list and search answers', async () => {
    const spent = async (): Promise<number> => {
      const { body } = await d.json<{ spent?: { day?: { spent: number } } }>('/agents/lister');
      return body.spent?.day?.spent ?? -1;
    };
    expect(await spent()).toBe(0);
    const listed = await fetch(`${d.url}/tools`, { headers: { authorization: `Bearer ${LISTER}` } });
    const rest = await spent();
    expect(rest).toBeGreaterThanOrEqual(Math.floor((await listed.text()).length / 8));
    const client = new Client({ name: 'lister', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', d.url), { requestInit: { headers: { authorization: `Bearer ${LISTER}` } } }));
    onTestFinished(() => client.close());
    await client.listTools();
    const afterList = await spent();
    expect(afterList).toBeGreaterThan(rest);
    await client.callTool({ name: 'search_tools', arguments: { query: 'log lines' } });
    expect(await spent()).toBeGreaterThan(afterList);
  });

  it('on two replicas sharing PostgreSQL, the budget is one: what the agent spent on A is spent on B', async () => {
    const [a, b] = await twoReplicas(await freshDatabaseUrl());
    const { calls } = await spendAll(a, CAPPED, 4);
    expect(calls).toBeGreaterThanOrEqual(2);
    const refused = await call(b, CAPPED);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('BUDGET_EXCEEDED');
    expect((await call(b, FREE)).status).toBe(200);
  });

  it('tokens spent on A while the database is away are charged to the shared count once it returns: B then refuses, and A counts them once', async () => {
    const url = await freshDatabaseUrl();
    const [a, b] = await twoReplicas(url);
    const spentOn = async (d: TestDaemon): Promise<number> => (await d.json<{ spent?: { hour?: { spent: number } } }>('/agents/capped')).body.spent?.hour?.spent ?? -1;

    const outage = await cutOff(url);
    onTestFinished(() => outage.restore());
    // A counts in memory while the database is away, and refuses on its own count.
    const { calls, refused } = await spendAll(a, CAPPED, 4);
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(refused.status).toBe(429);
    const spentAway = await spentOn(a);
    expect(spentAway).toBeGreaterThanOrEqual(50_000);

    await outage.restore();
    // A writes what it kept once it sees the database again (its probe): B reads it there.
    await expect.poll(() => spentOn(b), { timeout: 15_000, interval: 100 }).toBe(spentAway);
    const onB = await call(b, CAPPED);
    expect(onB.status).toBe(429);
    expect(((await onB.json()) as { error: { code: string } }).error.code).toBe('BUDGET_EXCEEDED');
    // Written once: A's count is the database's, not the database's plus its memory.
    expect(await spentOn(a)).toBe(spentAway);
  }, 60_000);
});
