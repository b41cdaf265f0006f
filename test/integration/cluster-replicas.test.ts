import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import pg from 'pg';
import type WebSocket from 'ws';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import type { ClusterSettings } from '../../src/cluster/join-cluster.js';
import type { ServerConfig } from '../../src/config/types.js';
import { newReplicaId, ownerOf } from '../../src/util/replica-id.js';
import { textOf } from '../helpers/connect.js';
import { prepareCluster } from '../../src/cluster/join-cluster.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { freshDatabaseUrl, postgresStores } from '../helpers/pg-stores.js';
import { closed, collectUntil, nextEvent, openEvents, received } from '../helpers/events.js';
import { fixtureServerConfig, startFixtureHttp } from '../helpers/fixtures.js';
import { modernToolCall } from '../helpers/mcp-client.js';
import { sharedByTests } from '../helpers/shared.js';
import { createDatabase } from '../helpers/postgres-server.js';
import { prepareClusterDatabase } from '../helpers/cluster.js';

/**
 * Issue #28 items 2–3 with two real daemons on one real PostgreSQL database: each lists the other
 * by heartbeat in `/status`, operator events and actions reach the other within a second over
 * LISTEN/NOTIFY, and what one replica holds — a 2025-era session, a held approval — is reached
 * through the other, as behind a balancer that is not sticky.
 */

interface Replica {
  sb: TestDaemon;
  id: string;
}

interface ReplicaPair {
  replicas: [Replica, Replica];
  /** Closes both daemons, then their pools, then drops the database. */
  close(): Promise<void>;
}

async function replicaPair(servers: Record<string, ServerConfig>): Promise<ReplicaPair> {
  const db = await createDatabase(inject('postgresUrl'));
  const pools: pg.Pool[] = [];
  const replicas: Replica[] = [];
  const close = async (): Promise<void> => {
    for (const { sb } of replicas) await sb.close();
    for (const pool of pools) await pool.end();
    await db.drop();
  };
  try {
    await prepareClusterDatabase(db.url);
    const sealKey = randomBytes(32);
    // Both at once: each waits on its own servers and database connections, not on the other.
    const started = await Promise.allSettled(
      [0, 1].map(async () => {
        const pool = new pg.Pool({ connectionString: db.url, max: 4 });
        // pool.end() resolves before its clients' sockets close; the DROP DATABASE … WITH (FORCE)
        // right after may terminate one still open, and an unheard pool 'error' is an uncaught exception.
        pool.on('error', () => {});
        pools.push(pool);
        const settings: ClusterSettings = { connectionString: db.url, pool, replicaId: newReplicaId(), sealKey, heartbeatIntervalMs: HEARTBEAT_MS };
        return { sb: await startDaemon({ servers, deps: { cluster: settings }, lifetime: 'manual' }), id: settings.replicaId };
      }),
    );
    for (const result of started) if (result.status === 'fulfilled') replicas.push(result.value);
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (err) {
    await close();
    throw err;
  }
  return { replicas: replicas as [Replica, Replica], close };
}

/**
 * The replicas' heartbeat: 500 ms rather than the daemon's 2 s, as the status test waits for the
 * beat that carries its servers once connected. Three intervals (1.5 s) without one on a busy box
 * would list a replica as not live.
 */
const HEARTBEAT_MS = 500;

/** Two replicas of their own for this test, running `servers`, closed when it finishes. */
async function twoReplicas(servers: Record<string, ServerConfig>): Promise<[Replica, Replica]> {
  const pair = await replicaPair(servers);
  onTestFinished(() => pair.close());
  return pair.replicas;
}

/**
 * Two replicas with echo, shared by the tests that only read through them (status, a session,
 * refused proofs) and by the approval test: only `reverse` needs an approval, which no other test
 * calls, and the call it holds is decided within it.
 */
const sharedPair = sharedByTests(
  () => replicaPair({ echo: { ...fixtureServerConfig('echo-stdio'), requireApproval: ['rev?rse'] } }),
  (pair) => pair.close(),
);

/** The next event of `type` from `replica` on the feed, within `ms`. */
async function nextFrom(feed: WebSocket, type: string, replica: string, ms: number): Promise<Record<string, unknown>> {
  const batch = await collectUntil(feed, (e) => e.type === type && (e as { replica?: string }).replica === replica, ms);
  return batch.at(-1) as unknown as Record<string, unknown>;
}

describe('replicas on one PostgreSQL database', () => {
  it('lists every replica by heartbeat in /status, each with its view of its servers', async () => {
    const [a, b] = (await sharedPair()).replicas;
    for (const { sb } of [a, b]) {
      const { body } = await sb.json<{ replicas: Array<{ id: string; live: boolean; self: boolean; url: string; servers: Array<{ name: string; status: string }> }> }>('/status');
      expect(body.replicas.map((r) => r.id).sort()).toEqual([a.id, b.id].sort());
      expect(body.replicas.every((r) => r.live)).toBe(true);
      expect(body.replicas[0]).toMatchObject({ self: true, url: sb.url });
      // The heartbeat written at start may predate the connect; the next one has it.
      await expect
        .poll(async () => (await sb.json<{ replicas: Array<{ servers: Array<{ name: string; status: string }> }> }>('/status')).body.replicas[0]!.servers, { timeout: 5_000 })
        .toEqual([expect.objectContaining({ name: 'echo', status: 'connected' })]);
    }
  });

  it('a reload on one replica reloads the other, and both feeds show it with the replica it happened on', async () => {
    // No server: what is relayed is the reload itself, not what it starts.
    const [a, b] = await twoReplicas({});
    const feed = await openEvents(b.sb.url);
    onTestFinished(() => feed.close());

    expect((await a.sb.json('/reload', { method: 'POST' })).status).toBe(200);

    // A's own events, relayed, and B's reload that A's caused: within a second. B starts as soon
    // as A's reload.started reaches it, so either may finish first.
    const of = (type: string, replica: string) => received(feed).find((e) => e.type === type && (e as { replica?: string }).replica === replica);
    await collectUntil(feed, () => of('reload.finished', a.id) !== undefined && of('reload.finished', b.id) !== undefined, 1_000);
    expect(of('reload.finished', a.id)).toMatchObject({ server: null, ok: true });
    expect(of('reload.finished', b.id)).toMatchObject({ server: null, ok: true });
    // B's says whose it follows: the relay applies no such event again, so nothing echoes back to A.
    expect(of('reload.started', b.id)).toMatchObject({ server: null, follows: a.id });
  });

  it("an agent added, then revoked, on one replica counts on the other at once, and its feed there closes: the registry's event, relayed", async () => {
    // Replicas as `serve` makes them: every store on the one database, agents included.
    const token = 'operator-token-for-the-cluster';
    const url = await freshDatabaseUrl();
    const start = async (): Promise<Replica> => {
      const stores = await postgresStores({ url });
      const cluster = await prepareCluster({ connectionString: url, pool: stores.pool!, state: stores.state });
      return { sb: await startDaemon({ config: { token }, deps: { stores, cluster } }), id: cluster.replicaId };
    };
    const [a, b] = await Promise.all([start(), start()]);
    const added = await a.sb.json<{ key: string }>('/agents', { method: 'POST', body: { name: 'bot' } });
    expect(added.status).toBe(201);
    const asBot = { headers: { authorization: `Bearer ${added.body.key}` } };
    // No route of B was asked: only the relayed agent.changed tells B to re-read the store.
    await expect.poll(async () => (await b.sb.json('/tools', asBot)).status, { timeout: 1_000, interval: 50 }).toBe(200);

    const botFeed = await openEvents(b.sb.url, { token: added.body.key });
    onTestFinished(() => botFeed.close());
    await nextEvent(botFeed, 'hello');
    const feed = await openEvents(b.sb.url, { token });
    onTestFinished(() => feed.close());

    expect((await a.sb.json('/agents/bot', { method: 'DELETE' })).status).toBe(200);
    expect(await nextFrom(feed, 'agent.changed', a.id, 1_000)).toMatchObject({ agent: 'bot', change: 'revoked' });
    expect((await closed(botFeed, 1_000)).code).toBe(4401);
    await expect.poll(async () => (await b.sb.json<{ error?: { code: string } }>('/tools', asBot)).body.error?.code, { timeout: 1_000, interval: 50 }).toBe('KEY_REVOKED');
  });

  it('a 2025-era session made on one replica keeps working when its requests reach the other', async () => {
    const [a, b] = (await sharedPair()).replicas;
    const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    onTestFinished(() => client.close());
    let n = 0;
    // A balancer that alternates between the replicas, request by request.
    const roundRobin: typeof fetch = (input, init) => {
      const target = new URL(input instanceof Request ? input.url : String(input));
      target.host = new URL((n++ % 2 === 0 ? a : b).sb.url).host;
      return fetch(target, init);
    };
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', a.sb.url), { fetch: roundRobin }));
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId as string;
    expect(ownerOf(sessionId)).toBe(a.id);

    for (let i = 0; i < 4; i += 1) {
      const result = await client.callTool({ name: 'mcp_echo_echo', arguments: { text: `hop ${i}` } });
      expect(textOf(result)).toBe(`hop ${i}`);
    }
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('mcp_echo_echo');
    expect(n).toBeGreaterThanOrEqual(6);
  });

  it('a session whose replica is gone answers 404, so the client starts a new one', async () => {
    // No server: a session is made by initialize alone.
    const [a, b] = await twoReplicas({});
    const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    onTestFinished(() => client.close());
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', a.sb.url)));
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId as string;
    await a.sb.daemon.close();

    const res = await fetch(new URL('/mcp', b.sb.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(404);
  });

  it('an approval held on one replica is decided through the other', async () => {
    const [a, b] = (await sharedPair()).replicas;
    const feed = await openEvents(b.sb.url);
    onTestFinished(() => feed.close());

    const call = a.sb.fetch('/tools/mcp_echo_reverse/call', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { text: 'held on A' } }),
    });
    // B's feed shows A's request for approval, naming A.
    const requested = (await nextFrom(feed, 'approval.requested', a.id, 1_000)) as { id: string };
    // The call's arguments are named by their digest: they are shown only with argument audit (issue #40).
    expect(requested).toMatchObject({ name: 'mcp_echo_reverse', argumentsDigest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(requested).not.toHaveProperty('arguments');
    expect(ownerOf(requested.id)).toBe(a.id);

    const approved = await b.sb.json<{ approval: { outcome: string } }>(`/approvals/${requested.id}/approve`, { method: 'POST' });
    expect(approved).toMatchObject({ status: 200, body: { approval: { id: requested.id, outcome: 'approved' } } });
    const res = await call;
    expect(res.status).toBe(200);
    expect(textOf((await res.json()) as { content: unknown })).toBe('A no dleh');
  });

  it("a 2026-07-28 call parked on one replica is continued through the other; a server's sealed state works on either", async () => {
    const modern = await startFixtureHttp('rich-http', { env: { ERA: 'modern' } });
    onTestFinished(() => modern.close());
    const [a, b] = await twoReplicas({ rich: fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy' } }), modern: { type: 'http', url: modern.url } });

    // Parked on A (a 2025-era server asked mid-call): the token names A, and B forwards the retry there.
    const first = await modernToolCall(a.sb.url, { name: 'mcp_rich_ask_elicitation', arguments: { message: 'Name?' } });
    expect(first.result).toMatchObject({ resultType: 'input_required' });
    const token = String(first.result?.requestState);
    expect(ownerOf(token)).toBe(a.id);
    const [key] = Object.keys(first.result?.inputRequests as object);
    const retry = await modernToolCall(b.sb.url, {
      name: 'mcp_rich_ask_elicitation',
      arguments: {},
      inputResponses: { [key!]: { action: 'accept', content: { answer: 'Grace' } } },
      requestState: token,
    });
    expect(retry.result).toMatchObject({ content: [{ type: 'text', text: 'elicited: accept Grace' }] });

    // A 2026-07-28 server's own state, sealed by A with the cluster's key, is opened by B itself.
    const asked = await modernToolCall(a.sb.url, { name: 'mcp_modern_ask_elicitation', arguments: { message: 'Who?' } });
    const sealed = String(asked.result?.requestState);
    expect(ownerOf(sealed)).toBeUndefined();
    const done = await modernToolCall(b.sb.url, {
      name: 'mcp_modern_ask_elicitation',
      arguments: { message: 'Who?' },
      inputResponses: { ask: { action: 'accept', content: { answer: 'Lin' } } },
      requestState: sealed,
    });
    expect(done.result).toMatchObject({ content: [{ type: 'text', text: 'elicited: accept Lin' }] });
  });

  it('refuses a forwarded request whose proof is forged or stale: Host and Origin are checked as for anyone', async () => {
    const [a, b] = (await sharedPair()).replicas;
    const bHost = new URL(b.sb.url).host;
    const headers = { host: bHost, 'x-switchboard-forwarded-from': b.id };
    for (const proof of [`${Date.now()}.AAAA`, `${Date.now() - 120_000}.${'A'.repeat(43)}`]) {
      const res = await rawGet(a.sb.url, '/servers', { ...headers, 'x-switchboard-forward-proof': proof });
      expect(res.status).toBe(403);
      expect(res.body).toContain('FORBIDDEN_HOST');
    }
  });
});

/** A GET with a Host header of our choosing (fetch does not let one set it). */
function rawGet(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    const req = httpRequest({ host: url.hostname, port: url.port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
