import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { textOf } from '../helpers/connect.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { startNginx } from '../helpers/nginx.js';
import { replicaCluster, TOKEN } from '../helpers/replica-cluster.js';

/**
 * Issue #43 item 7, the short form of the cluster soak (B15 in bench/ is the long one): three
 * `serve` replicas on one PostgreSQL database behind nginx (sticky on `Mcp-Session-Id`), 20
 * agents — 10 pinned to 2026-07-28, 10 2025-era sessions — calling in loops; one replica is
 * SIGKILLed under them and started again on its port. 2026-07-28 calls fail only while it is
 * down (with the balancer's 502); every 2025 session whose call failed starts a new one and goes
 * on; the restarted replica takes calls again. Phases follow the calls counted, never a clock.
 */

const SPAWN_TIMEOUT_MS = 240_000;
const AGENTS = 10;

function connect(base: string, mode: 'legacy' | { pin: string }): Promise<Client> {
  const client = new Client({ name: 'soak', version: '1.0.0' }, { versionNegotiation: { mode } });
  onTestFinished(() => client.close().catch(() => undefined));
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
  return client.connect(transport).then(() => client);
}

/** Resolves when `count()` reaches `n`; `tick()` is called after every counted call. */
function counter(): { count: () => number; tick: () => void; reach: (n: number) => Promise<void> } {
  let n = 0;
  const waiters: Array<{ at: number; resolve: () => void }> = [];
  return {
    count: () => n,
    tick: () => {
      n += 1;
      for (const w of waiters.filter((w) => w.at <= n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    },
    reach: (at) => (at <= n ? Promise.resolve() : new Promise((resolve) => void waiters.push({ at, resolve }))),
  };
}

describe('the cluster soak, short form', () => {
  it('20 agents over three replicas, one SIGKILLed and restarted: 2026-07-28 calls fail only while it is down, failed sessions re-initialise, it serves again', async () => {
    const cluster = await replicaCluster({ echo: fixtureServerConfig('echo-stdio') });
    const replicas = [await cluster.start(), await cluster.start(), await cluster.start()];
    const hosts = replicas.map((r) => new URL(r.url).host);
    const nginx = await startNginx({ upstreams: hosts, sticky: true, failTimeoutS: 1, cleanup: onTestFinished });

    const ok = counter();
    let done = false;
    let phase: 'before' | 'killed' | 'restarted' = 'before';
    const failures: Array<{ era: string; phase: string; error: string }> = [];
    let reinitialised = 0;
    const loop = async (era: 'modern' | 'legacy', n: number): Promise<void> => {
      const mode = era === 'legacy' ? 'legacy' : { pin: '2026-07-28' };
      let client: Client | undefined = await connect(nginx.url, mode);
      for (let i = 0; !done; i += 1) {
        try {
          client ??= await connect(nginx.url, mode);
          const text = `${era}${n}.${i}`;
          expect(textOf(await client.callTool({ name: 'mcp_echo_echo', arguments: { text } }))).toBe(text);
          ok.tick();
        } catch (err) {
          failures.push({ era, phase, error: String(err) });
          if (era === 'legacy') {
            await client?.close().catch(() => undefined);
            client = undefined;
            reinitialised += 1;
          }
        }
      }
    };
    const agents = [...Array.from({ length: AGENTS }, (_, n) => loop('modern', n)), ...Array.from({ length: AGENTS }, (_, n) => loop('legacy', n))];

    await ok.reach(200);
    const victim = replicas[1]!;
    victim.serve.child.kill('SIGKILL');
    phase = 'killed';
    await victim.serve.exited;
    const port = Number(new URL(victim.url).port);
    const reborn = await cluster.start({ port });
    phase = 'restarted';
    const atRestart = (await nginx.accessLog()).length;
    await ok.reach(ok.count() + 300);
    done = true;
    await Promise.all(agents);

    // Calls failed only while the replica was down: none before the kill, none once it was back.
    // (Not only the calls in flight on it: nginx answers 502 to some calls sent over its cached
    // keep-alive connections to the dead replica — 22 of 20 agents' calls in one run; B15 counts them.)
    const modern = failures.filter((f) => f.era === 'modern');
    expect(modern.filter((f) => f.phase !== 'killed').map((f) => `${f.phase}: ${f.error.slice(0, 120)}`)).toEqual([]);
    expect(modern.every((f) => /502|fetch failed|terminated|socket/i.test(f.error)), JSON.stringify(modern.slice(0, 3))).toBe(true);
    // Each 2025 session whose call failed started anew and went on. (Not only at the kill: in
    // two of three runs seen, one session's call also hung until the SDK's 60 s timeout after the
    // restart — a known gap, see BENCHMARKS B15; the wait for it is most of this test's time.)
    const legacy = failures.filter((f) => f.era === 'legacy');
    expect(legacy.filter((f) => f.phase === 'before')).toEqual([]);
    expect(reinitialised).toBe(legacy.length);
    // The restarted replica, on its old address, is in the balancer's rotation again.
    const after = (await nginx.accessLog()).slice(atRestart).filter((e) => e.path === '/mcp' && e.status < 400);
    expect(after.some((e) => e.upstream === hosts[1]), `upstreams after the restart: ${[...new Set(after.map((e) => e.upstream))].join(', ')}`).toBe(true);
    expect(new URL(reborn.url).host).toBe(hosts[1]);
  }, SPAWN_TIMEOUT_MS);
});
