import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ownerOf } from '../../src/util/replica-id.js';
import { textOf } from '../helpers/connect.js';
import type { ServerConfig } from '../../src/config/types.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { startReplica } from '../helpers/in-process-replica.js';
import { tempDir } from '../helpers/process.js';
import { replicaCluster, TOKEN, type Replica } from '../helpers/replica-cluster.js';

/**
 * Issue #43, the cluster soak's hung 2025-session call: a replica SIGKILLed while a 2025-era
 * session's call was in flight on it left the SDK client waiting for its request timeout (60 s),
 * because the replica had already flushed `200 text/event-stream` and the stream then ended
 * without an answer. The call must fail at once — directly, and through the replica that
 * forwarded it — and once the replica is back on its port the session answers 404, so the
 * client starts a new one. An owner that stops without dying (SIGSTOP) is cut off the same way
 * once its heartbeat lapses, by the replica that forwarded to it.
 */

const SPAWN_TIMEOUT_MS = 60_000;
/** Far above a prompt failure, far below the SDK's 60 s: a call still waiting at this point hangs. */
const CALL_TIMEOUT_MS = 15_000;

/** What a promise settled with: its error's message, or 'answered'. */
function outcome(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'answered',
    (err: unknown) => (err instanceof Error ? err.message : String(err)),
  );
}

/**
 * The replica that forwards (B): what is tested of it is what it answers when the owner dies, not
 * its process, so it is a daemon in this process made as `serve` makes one, on the cluster's database.
 * The owner (A), SIGKILLed and restarted, is a `switchboard serve` process. The two start together:
 * neither needs the other to have started.
 */
function forwarder(dbUrl: string, servers: Record<string, ServerConfig>): Promise<TestDaemon> {
  return startReplica(dbUrl, { servers, config: { token: TOKEN } });
}

/**
 * A 2025-era session made on the owner (A, a `serve` process), and a slow call of it sent through
 * B, which forwards it: resolved once the owner's stream has reached the client through B (headers
 * and a progress event are out). `call` settles with the answer or the client's error.
 */
async function forwardedCallThatStreamed(): Promise<{ owner: Replica; call: Promise<{ answered: true } | { message: string; data: unknown }> }> {
  const dir = await tempDir();
  const servers = { slow: fixtureServerConfig('slow-tool') };
  const replicas = await replicaCluster(servers);
  const [a, b] = await Promise.all([replicas.start(), forwarder(replicas.dbUrl, servers)]);
  const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
  onTestFinished(() => client.close().catch(() => undefined));
  let target = a.url;
  const steered: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    url.host = new URL(target).host;
    return fetch(url, init);
  };
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', a.url), { fetch: steered, requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
  target = b.url;

  let progressed!: () => void;
  const firstProgress = new Promise<void>((resolve) => (progressed = resolve));
  const call = client
    .callTool(
      { name: 'mcp_slow_slow', arguments: { durationMs: 60_000, untilFile: join(dir, 'never'), progressEveryMs: 100 } },
      { timeout: CALL_TIMEOUT_MS, onprogress: () => progressed() },
    )
    .then(
      () => ({ answered: true as const }),
      (err: unknown) => ({ message: err instanceof Error ? err.message : String(err), data: (err as { data?: unknown }).data }),
    );
  await firstProgress;
  return { owner: a, call };
}

describe('a 2025-era session whose replica is SIGKILLed and restarted on its port', () => {
  it(
    "its calls in flight fail at once (direct and forwarded), not at the client's timeout; then the session answers 404 and a new one works",
    async () => {
      const dir = await tempDir();
      const servers = { slow: fixtureServerConfig('slow-tool'), echo: fixtureServerConfig('echo-stdio') };
      const replicas = await replicaCluster(servers);
      const [a, b] = await Promise.all([replicas.start(), forwarder(replicas.dbUrl, servers)]);
      // A balancer the test steers: each request goes to `target`.
      let target = a.url;
      const steered: typeof fetch = (input, init) => {
        const url = new URL(input instanceof Request ? input.url : String(input));
        url.host = new URL(target).host;
        return fetch(url, init);
      };
      const connect = async (): Promise<Client> => {
        const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
        onTestFinished(() => client.close().catch(() => undefined));
        await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', target), { fetch: steered, requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
        return client;
      };
      const client = await connect();
      const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId as string;
      const aId = ownerOf(sessionId);

      // Two calls of the session in flight on A: one sent to A, one sent to B (which forwards it).
      const inFlight = async (name: string): Promise<{ call: Promise<string> }> => {
        const started = join(dir, name);
        const call = outcome(
          client.callTool({ name: 'mcp_slow_slow', arguments: { durationMs: 60_000, untilFile: join(dir, 'never'), startedFile: started } }, { timeout: CALL_TIMEOUT_MS }),
        );
        await expect.poll(() => existsSync(started), { timeout: 10_000, interval: 50 }).toBe(true);
        return { call };
      };
      const direct = await inFlight('direct-started');
      target = b.url;
      const forwarded = await inFlight('forwarded-started');

      a.serve.child.kill('SIGKILL');
      const failures = await Promise.all([direct.call, forwarded.call]);
      for (const message of failures) {
        expect(message).not.toBe('answered');
        expect(message).not.toMatch(/timed out/i);
      }

      // A again on its port (a new replica id); the session is gone with the old process.
      const restarted = await replicas.start({ port: Number(new URL(a.url).port) });
      expect(restarted.url).toBe(a.url);
      for (const via of [b.url, a.url]) {
        target = via;
        expect(await outcome(client.callTool({ name: 'mcp_echo_echo', arguments: { text: 'lost' } }, { timeout: CALL_TIMEOUT_MS }))).toMatch(/Session not found/);
      }
      // The agent starts a new session, as the SDK's 404 tells it to.
      target = b.url;
      const fresh = await connect();
      expect(ownerOf((fresh.transport as StreamableHTTPClientTransport).sessionId as string)).not.toBe(aId);
      expect(textOf(await fresh.callTool({ name: 'mcp_echo_echo', arguments: { text: 'again' } }))).toBe('again');
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'a forwarded call whose owner dies after it streamed progress is answered CALL_OUTCOME_UNKNOWN by the forwarding replica',
    async () => {
      const { owner, call } = await forwardedCallThatStreamed();
      owner.serve.child.kill('SIGKILL');
      const failure = await call;
      expect(failure).toMatchObject({ data: { code: 'CALL_OUTCOME_UNKNOWN' } });
      expect((failure as { message: string }).message).toMatch(/may or may not have run/);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "a forwarded call whose owner stops (SIGSTOP: its socket open, no answer, no heartbeat) is cut off once the owner is no longer live: CALL_OUTCOME_UNKNOWN, not the client's timeout",
    async () => {
      const { owner, call } = await forwardedCallThatStreamed();
      // Whatever happens below, the stopped owner goes (a stopped process still takes SIGKILL).
      onTestFinished(() => void owner.serve.child.kill('SIGKILL'));
      // Frozen, not dead: the connection B forwarded on stays open, and nothing more comes on it.
      owner.serve.child.kill('SIGSTOP');
      // B's replicas beat every 2 s and one silent three beats is not live: cut off within ~9 s,
      // inside the client's 15 s (a call still waiting then fails "Request timed out" instead).
      const failure = await call;
      expect(failure).toMatchObject({ data: { code: 'CALL_OUTCOME_UNKNOWN' } });
      expect((failure as { message: string }).message).toMatch(/may or may not have run/);
    },
    SPAWN_TIMEOUT_MS,
  );
});
