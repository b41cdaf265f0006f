import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-run.js';
import { textOf } from '../helpers/connect.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { freePort } from '../helpers/free-port.js';
import { startReplica } from '../helpers/in-process-replica.js';
import { freshDatabaseUrl } from '../helpers/pg-stores.js';

/**
 * Issue #43 item 2 with three replicas on one real PostgreSQL database: a call held on A is
 * listed by `GET /approvals` on B and C, naming A as the replica holding it, and approved
 * through C. Nothing here is about a replica's process: they are daemons in this process, made as
 * `serve` makes them (test/helpers/in-process-replica.ts); the CLI is the real bundle.
 */

const TOKEN = 'operator-secret-for-replicas';
const SPAWN_TIMEOUT_MS = 60_000;

interface Listed {
  approvals: Array<{ id: string; name: string; argumentsDigest: string; replica: string }>;
  unansweredReplicas?: string[];
}

async function replicaId(replica: TestDaemon): Promise<string> {
  const { body } = await replica.json<{ replicas: Array<{ id: string; self: boolean }> }>('/status');
  return body.replicas.find((r) => r.self)!.id;
}

describe('approvals across the cluster', () => {
  it(
    'a call held on A is listed on B and C with the replica holding it, and approved on C',
    async () => {
      const dbUrl = await freshDatabaseUrl();
      const options = { servers: { echo: { ...fixtureServerConfig('echo-stdio'), requireApproval: ['echo'] } }, config: { token: TOKEN } };
      // Started together: each waits on its own server and database connections, not on the others.
      const [a, b, c] = await Promise.all([startReplica(dbUrl, options), startReplica(dbUrl, options), startReplica(dbUrl, options)]);
      const aId = await replicaId(a);

      const call = fetch(new URL('/tools/mcp_echo_echo/call', a.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: { text: 'held on A' } }),
      });
      for (const replica of [b, c]) {
        await expect.poll(async () => (await replica.json<Listed>('/approvals')).body.approvals.length, { timeout: 5_000, interval: 50 }).toBe(1);
        const { status, body } = await replica.json<Listed>('/approvals');
        expect(status).toBe(200);
        expect(body.unansweredReplicas).toBeUndefined();
        expect(body.approvals[0]).toMatchObject({ name: 'mcp_echo_echo', argumentsDigest: expect.any(String), replica: aId });
      }
      // `switchboard approvals` against B shows the replica holding the call (issue #43 leftovers, a).
      const cli = await runCli(['approvals', '--url', b.url, '--token', TOKEN], { env: { PATH: process.env.PATH ?? '' } });
      expect(cli).toMatchObject({ code: 0, stderr: '' });
      const [header, row] = cli.stdout.split('\n');
      expect(header).toMatch(/^ID +TOOL +SERVER +AGENT +REPLICA +EXPIRES/);
      expect(row!.slice(header!.indexOf('REPLICA')).split(/ +/)[0]).toBe(aId);
      // A lists it too, as its own.
      expect((await a.json<Listed>('/approvals')).body.approvals).toEqual([expect.objectContaining({ replica: aId })]);

      const { id } = (await c.json<Listed>('/approvals')).body.approvals[0]!;
      const approved = await c.json<{ approval: { id: string; outcome: string } }>(`/approvals/${id}/approve`, { method: 'POST' });
      expect(approved).toMatchObject({ status: 200, body: { approval: { id, outcome: 'approved' } } });
      const res = await call;
      expect(res.status).toBe(200);
      expect(textOf((await res.json()) as { content: unknown })).toBe('held on A');
      for (const replica of [a, b, c]) expect((await replica.json<Listed>('/approvals')).body.approvals).toEqual([]);

      // A live replica that does not answer (its heartbeat row fresh, nothing listening at its
      // address): the CLI says whose held calls are missing, on stderr.
      const db = new pg.Client({ connectionString: dbUrl });
      await db.connect();
      const silent = 'dead0000beef';
      await db.query("INSERT INTO replicas (id, url, started_at, heartbeat_at, info) VALUES ($1, $2, $3, $3, '{}')", [
        silent,
        `http://127.0.0.1:${await freePort()}`,
        Date.now() + 60_000,
      ]);
      await db.end();
      const partial = await runCli(['approvals', '--url', b.url, '--token', TOKEN], { env: { PATH: process.env.PATH ?? '' } });
      expect(partial).toMatchObject({ code: 0, stdout: 'No calls are waiting for approval.\n' });
      expect(partial.stderr).toBe(`warning: not listed are the calls held on 1 replica that did not answer (${silent})\n`);
    },
    SPAWN_TIMEOUT_MS,
  );
});
