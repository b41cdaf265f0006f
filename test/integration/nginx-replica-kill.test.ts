import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { textOf } from '../helpers/connect.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { startNginx, type AccessEntry } from '../helpers/nginx.js';
import { replicaCluster, TOKEN } from '../helpers/replica-cluster.js';
import { startStaleRelay } from '../helpers/stale-relay.js';

/**
 * Issue #43 item 7 (B15's 502s at a replica kill): a 2026-07-28 call that reaches nginx after a
 * replica was SIGKILLed must be answered by a live replica, never `502`. The moment B15 met under
 * load — nginx still holding connections to the dead replica it has not seen closed — is made on
 * purpose: each replica sits behind a relay (test/helpers/stale-relay.ts) that, frozen when its
 * replica is killed, refuses new connections and keeps the old ones looking open until written to.
 * Without upstream keep-alive (test/helpers/nginx.ts's default, deploy/compose/nginx.conf) the call
 * meets a refused connect and nginx sends it to the other replica; with `keepalive 32` (the old
 * config) nginx writes it to a held connection and, as a POST is never resent, answers 502.
 */

const SPAWN_TIMEOUT_MS = 90_000;

async function callsAfterAKill(keepalive: number): Promise<{ answers: string[]; log: AccessEntry[]; deadAddress: string }> {
  const replicas = await replicaCluster({ echo: fixtureServerConfig('echo-stdio') });
  const [a, b] = [await replicas.start(), await replicas.start()];
  const relays = await Promise.all([a, b].map((r) => startStaleRelay({ host: '127.0.0.1', port: Number(new URL(r.url).port) }, onTestFinished)));
  const nginx = await startNginx({ upstreams: relays.map((r) => r.address), keepalive, cleanup: onTestFinished });
  const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  onTestFinished(() => client.close().catch(() => undefined));
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', nginx.url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
  const echo = async (text: string): Promise<string> => textOf(await client.callTool({ name: 'mcp_echo_echo', arguments: { text } }));

  // Round-robin: calls reach both replicas (with keep-alive, nginx now holds idle connections to both).
  for (let i = 0; i < 4; i += 1) expect(await echo(`warm ${i}`)).toBe(`warm ${i}`);
  expect(relays[0]!.connections).toBeGreaterThan(0);
  const before = (await nginx.accessLog()).length;

  await relays[0]!.freeze();
  const exited = new Promise((resolve) => a.serve.child.once('exit', resolve));
  a.serve.child.kill('SIGKILL');
  await exited;

  // Every call below reaches nginx after the replica died: none was in flight on it.
  const answers: string[] = [];
  for (let i = 0; i < 4; i += 1) answers.push(await echo(`after ${i}`).catch((err: unknown) => `failed: ${String(err)}`));
  return { answers, log: (await nginx.accessLog()).slice(before), deadAddress: relays[0]!.address };
}

describe('nginx in front of replicas, one SIGKILLed (issue #43 item 7)', () => {
  it('without upstream keep-alive (the shipped config), a call that arrives after the kill is answered by the live replica, never 502', async () => {
    const { answers, log, deadAddress } = await callsAfterAKill(0);
    expect(answers).toEqual(['after 0', 'after 1', 'after 2', 'after 3']);
    expect(log.filter((e) => e.status === 502)).toEqual([]);
    // nginx did try the dead replica — a refused connect — and moved the POST on to the other one.
    const movedOn = log.filter((e) => e.method === 'POST' && e.upstream.startsWith(`${deadAddress}, `));
    expect(movedOn.length).toBeGreaterThan(0);
    expect(movedOn.every((e) => e.status === 200)).toBe(true);
  }, SPAWN_TIMEOUT_MS);

  it('with `keepalive 32` (the old config), the same call goes over a held connection to the dead replica and fails with 502', async () => {
    const { answers, log, deadAddress } = await callsAfterAKill(32);
    expect(answers.filter((a) => a.startsWith('failed:')).length).toBeGreaterThan(0);
    expect(log.some((e) => e.status === 502 && e.upstream === deadAddress)).toBe(true);
  }, SPAWN_TIMEOUT_MS);
});
