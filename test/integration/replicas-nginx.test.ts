import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ownerOf } from '../../src/util/replica-id.js';
import { textOf } from '../helpers/connect.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { startReplica } from '../helpers/in-process-replica.js';
import { startNginx } from '../helpers/nginx.js';
import { freshDatabaseUrl } from '../helpers/pg-stores.js';
import { replicaCluster, TOKEN, type Replica } from '../helpers/replica-cluster.js';

/**
 * Issue #28 item 3 behind a real nginx (Debian) that is not sticky: two replicas on one
 * PostgreSQL database. 2026-07-28 calls go to both and all succeed; a 2025-era session works
 * although its requests land on either replica (the other forwards them) — daemons in this
 * process, made as `serve` makes them, as nothing there is about a replica's process; a
 * `serve` replica killed under load costs at most the calls it had in flight, and its sessions
 * answer 404 so their clients start new ones.
 */

const SPAWN_TIMEOUT_MS = 90_000;

function agent(base: string, mode: 'legacy' | { pin: string }): Promise<Client> {
  const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode } });
  onTestFinished(() => client.close().catch(() => undefined));
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
  return client.connect(transport).then(() => client);
}

async function echo(client: Client, text: string): Promise<string> {
  return textOf(await client.callTool({ name: 'mcp_echo_echo', arguments: { text } }));
}

async function replicaId(r: Replica): Promise<string> {
  const { body } = await r.json<{ replicas: Array<{ id: string; self: boolean }> }>('/status');
  return body.replicas.find((x) => x.self)!.id;
}

/**
 * Two replicas from `start` behind nginx: `serve` processes (`serveReplicas`), or daemons in this
 * process made as `serve` makes them (`inProcess`, for a test not about a replica's process).
 */
async function twoBehindNginx<R extends { url: string }>(
  start: () => Promise<[R, R]>,
): Promise<{ a: R; b: R; url: string; upstreamsOf: (path: string, sessionId?: string) => Promise<string[]> }> {
  const [a, b] = await start();
  const nginx = await startNginx({ upstreams: [a, b].map((r) => new URL(r.url).host), cleanup: onTestFinished });
  const upstreamsOf = async (path: string, sessionId?: string): Promise<string[]> =>
    (await nginx.accessLog()).filter((e) => e.path === path && (sessionId === undefined || e.sessionId === sessionId)).map((e) => e.upstream);
  return { a, b, url: nginx.url, upstreamsOf };
}

const ECHO = { echo: fixtureServerConfig('echo-stdio') };

async function serveReplicas(): Promise<[Replica, Replica]> {
  const replicas = await replicaCluster(ECHO);
  // Started together: each waits on its own process, database and fixture, not on the other.
  return Promise.all([replicas.start(), replicas.start()]);
}

async function inProcess(): Promise<[TestDaemon, TestDaemon]> {
  const url = await freshDatabaseUrl();
  const options = { servers: ECHO, config: { token: TOKEN } };
  return Promise.all([startReplica(url, options), startReplica(url, options)]);
}

describe('replicas behind nginx (round-robin, not sticky)', () => {
  it(
    '2026-07-28 calls reach both replicas without an error; a 2025-era session works whichever replica a request lands on',
    async () => {
      const { a, b, url, upstreamsOf } = await twoBehindNginx(inProcess);
      const modern = await agent(url, { pin: '2026-07-28' });
      for (let i = 0; i < 10; i += 1) expect(await echo(modern, `m${i}`)).toBe(`m${i}`);
      const hosts = [a, b].map((r) => new URL(r.url).host);
      expect(new Set(await upstreamsOf('/mcp'))).toEqual(new Set(hosts));

      const legacy = await agent(url, 'legacy');
      for (let i = 0; i < 6; i += 1) expect(await echo(legacy, `l${i}`)).toBe(`l${i}`);
      expect((await legacy.listTools()).tools.map((t) => t.name)).toContain('mcp_echo_echo');
      // nginx sent the session's requests to both replicas: the one that did not make it forwarded them.
      const sessionId = (legacy.transport as StreamableHTTPClientTransport).sessionId as string;
      expect(new Set(await upstreamsOf('/mcp', sessionId))).toEqual(new Set(hosts));
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'a replica killed under load: calls keep succeeding once nginx notices, and its sessions re-initialize',
    async () => {
      const { a, b, url } = await twoBehindNginx(serveReplicas);
      const ids = new Map([
        [await replicaId(a), a],
        [await replicaId(b), b],
      ]);
      // A 2025-era session, and the replica that holds it: the one to kill.
      const legacy = await agent(url, 'legacy');
      const sessionId = (legacy.transport as StreamableHTTPClientTransport).sessionId as string;
      const victim = ids.get(ownerOf(sessionId) as string) as Replica;
      expect(victim).toBeDefined();

      const modern = await Promise.all([0, 1, 2, 3].map(() => agent(url, { pin: '2026-07-28' })));
      let killed = false;
      const outcomes: Array<{ afterKill: boolean; ok: boolean }> = [];
      // Four callers in parallel; the replica dies under them after a few rounds.
      await Promise.all(
        modern.map(async (client, n) => {
          for (let i = 0; i < 15; i += 1) {
            if (n === 0 && i === 4) {
              victim.serve.child.kill('SIGKILL');
              killed = true;
            }
            const afterKill = killed;
            const ok = await echo(client, `c${n}.${i}`).then(
              (text) => text === `c${n}.${i}`,
              () => false,
            );
            outcomes.push({ afterKill, ok });
          }
        }),
      );
      // At most the calls in flight on the victim when it died fail; every call after that succeeds.
      const failed = outcomes.filter((o) => !o.ok);
      expect(failed.length).toBeLessThanOrEqual(modern.length);
      expect(outcomes.slice(-modern.length * 5).every((o) => o.ok)).toBe(true);

      // The session died with its replica: 404, and a new session works.
      const error = await legacy.callTool({ name: 'mcp_echo_echo', arguments: { text: 'orphan' } }).catch((err: unknown) => err);
      expect(String(error)).toMatch(/404|Session not found/);
      const again = await agent(url, 'legacy');
      expect(await echo(again, 'fresh')).toBe('fresh');
    },
    SPAWN_TIMEOUT_MS,
  );
});
