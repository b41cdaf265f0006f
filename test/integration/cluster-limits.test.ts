import { describe, expect, it, onTestFinished } from 'vitest';
import { prepareCluster } from '../../src/cluster/join-cluster.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { cutOff, freshDatabaseUrl, postgresStores } from '../helpers/pg-stores.js';

/**
 * Issue #43 item 1: an agent's rate limit is counted once for the cluster. Three replicas on one
 * real PostgreSQL database take the agent's calls round robin; the limit holds wherever a call
 * lands, and still holds — each replica on its own share — while the database is away. Time is
 * one manual clock shared by the three, so "a minute" costs no waiting.
 */

const TOKEN = 'operator-secret-for-cluster-limits';
const BOT_KEY = 'bot-key-for-the-cluster-limit-test';

async function threeReplicas(url: string, clock: ManualClock): Promise<TestDaemon[]> {
  const replicas: TestDaemon[] = [];
  for (let i = 0; i < 3; i += 1) {
    const stores = await postgresStores({ url });
    const cluster = await prepareCluster({ connectionString: url, pool: stores.pool!, state: stores.state });
    replicas.push(
      await startDaemon({
        servers: { echo: fixtureServerConfig('echo-stdio') },
        config: { token: TOKEN, agents: { bot: { key: BOT_KEY, rateLimit: { perMinute: 60 } } } },
        deps: { stores, cluster, clock },
      }),
    );
  }
  return replicas;
}

/** One call of the agent's on `replica`: its status, and the code of a refusal. */
async function call(replica: TestDaemon): Promise<{ status: number; code?: string; retryAfter: number }> {
  const res = await fetch(`${replica.url}/tools/mcp_echo_echo/call`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BOT_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: { text: 'hi' } }),
  });
  const body = (await res.json()) as { error?: { code: string } };
  return { status: res.status, ...(body.error ? { code: body.error.code } : {}), retryAfter: Number(res.headers.get('retry-after') ?? 0) };
}

/** Calls round robin over `replicas` until each has refused once; how many passed on each. */
async function callUntilRefusedEverywhere(replicas: TestDaemon[]): Promise<number[]> {
  const passed = replicas.map(() => 0);
  const refused = new Set<number>();
  for (let i = 0; refused.size < replicas.length && i < 500; i += 1) {
    const at = i % replicas.length;
    if (refused.has(at)) continue;
    const answer = await call(replicas[at]!);
    if (answer.status === 200) passed[at]! += 1;
    else {
      expect(answer).toMatchObject({ status: 429, code: 'AGENT_RATE_LIMITED' });
      expect(answer.retryAfter).toBeGreaterThan(0);
      refused.add(at);
    }
  }
  return passed;
}

describe('rate limits counted once for the cluster', () => {
  it('60 calls a minute over three replicas round robin: the 61st is refused wherever it lands, and the bucket refills once for all; with the database away each replica keeps to its share', async () => {
    const url = await freshDatabaseUrl();
    const clock = new ManualClock();
    const replicas = await threeReplicas(url, clock);

    // The burst: 60 calls spread over the three pass, then each replica refuses.
    for (let i = 0; i < 60; i += 1) expect((await call(replicas[i % 3]!)).status).toBe(200);
    for (const replica of replicas) expect(await call(replica)).toMatchObject({ status: 429, code: 'AGENT_RATE_LIMITED' });

    // Half a minute later: 30 more tokens for the whole cluster (within 10 %), not 30 per replica.
    clock.advance(30_000);
    const refilled = (await callUntilRefusedEverywhere(replicas)).reduce((a, b) => a + b, 0);
    expect(refilled).toBeGreaterThanOrEqual(27);
    expect(refilled).toBeLessThanOrEqual(33);

    // The database goes away mid-minute: the bucket it last showed was empty, so every replica refuses on its own.
    const outage = await cutOff(url);
    onTestFinished(() => outage.restore());
    for (const replica of replicas) expect(await call(replica)).toMatchObject({ status: 429, code: 'AGENT_RATE_LIMITED' });

    // Still away half a minute on: each replica refills its third of the rate, so together they
    // pass what the cluster would have (30), never 30 each.
    clock.advance(30_000);
    const shares = await callUntilRefusedEverywhere(replicas);
    for (const passed of shares) expect(passed).toBeLessThanOrEqual(10);
    expect(shares.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(27);
    await outage.restore();
  }, 60_000);
});
