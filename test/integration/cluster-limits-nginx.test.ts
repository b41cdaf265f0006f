import { describe, expect, it, onTestFinished } from 'vitest';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { startNginx } from '../helpers/nginx.js';
import { startReplica } from '../helpers/in-process-replica.js';
import { cutOff, freshDatabaseUrl } from '../helpers/pg-stores.js';

/**
 * Issue #43 item 1 as an operator runs it: three replicas on one real PostgreSQL database behind
 * a real nginx that is not sticky, an agent limited to 60 calls a minute. The replicas share one
 * manual clock that stands still, so no token is refilled while the test calls, however long the
 * calls take on a busy box: the count is held to the issue's ±10 % on the burst alone (the refill
 * is cluster-limits.test.ts's). The replicas are daemons in this process, made as `serve` makes
 * them (test/helpers/in-process-replica.ts): what is tested is the shared bucket, not a replica's
 * process.
 */

const SPAWN_TIMEOUT_MS = 90_000;
const BOT_KEY = 'bot-key-for-the-nginx-limit-test';

describe("an agent's rate limit over three replicas behind nginx", () => {
  it(
    'the 61st call in the minute is refused wherever it lands (±10 %), and still refused with the database gone',
    async () => {
      const dbUrl = await freshDatabaseUrl();
      const options = {
        servers: { echo: fixtureServerConfig('echo-stdio') },
        config: { token: 'operator-secret-for-replicas', agents: { bot: { key: BOT_KEY, rateLimit: { perMinute: 60 } } } },
      };
      const clock = new ManualClock();
      const replica = () => startReplica(dbUrl, { ...options, deps: { clock } });
      const all = [await replica(), await replica(), await replica()];
      const nginx = await startNginx({ upstreams: all.map((r) => new URL(r.url).host), cleanup: onTestFinished });
      const call = async (): Promise<{ status: number; code?: string }> => {
        const res = await fetch(`${nginx.url}/tools/mcp_echo_echo/call`, {
          method: 'POST',
          headers: { authorization: `Bearer ${BOT_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ arguments: { text: 'hi' } }),
        });
        const body = (await res.json()) as { error?: { code: string } };
        return { status: res.status, ...(body.error ? { code: body.error.code } : {}) };
      };

      // Round robin until three refusals in a row: one on each replica.
      let passed = 0;
      let refusedInARow = 0;
      for (let i = 0; refusedInARow < 3 && i < 200; i += 1) {
        const answer = await call();
        if (answer.status === 200) {
          passed += 1;
          refusedInARow = 0;
        } else {
          expect(answer).toEqual({ status: 429, code: 'AGENT_RATE_LIMITED' });
          refusedInARow += 1;
        }
      }
      expect(refusedInARow).toBe(3);
      expect(passed).toBeGreaterThanOrEqual(60);
      expect(passed).toBeLessThanOrEqual(66);
      const upstreams = (await nginx.accessLog()).filter((e) => e.path === '/tools/mcp_echo_echo/call').map((e) => e.upstream);
      expect(new Set(upstreams.slice(-3)).size).toBe(3);

      // The database goes away: each replica is on its own share of an empty bucket.
      const outage = await cutOff(dbUrl);
      onTestFinished(() => outage.restore());
      for (let i = 0; i < 6; i += 1) expect(await call()).toEqual({ status: 429, code: 'AGENT_RATE_LIMITED' });
      await outage.restore();
    },
    SPAWN_TIMEOUT_MS,
  );
});
