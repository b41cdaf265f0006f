import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ACCEPT_POLL_MS, accepts } from '../helpers/accepts.js';
import { startDaemon } from '../helpers/daemon.js';
import { freePort } from '../helpers/free-port.js';

/**
 * README.md, "Load balancers and Mcp-Session-Id", recommends an HAProxy stick table that learns
 * each session id from the answer to `initialize`. This runs that very block, taken from the
 * README, in a real HAProxy (Debian's `haproxy`, installed by .ci/run) in front of two daemons:
 * every 2025-era session, whichever replica made it, must keep working — which a hash on the
 * header alone does not give (test/integration/nginx-helper.test.ts).
 */

const HAPROXY_BIN = '/usr/sbin/haproxy';
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function readmeBackend(): string {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const block = /```haproxy\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('README.md has no ```haproxy block');
  return block;
}

/** HAProxy's request log (stderr, one line per request): the server chosen, the session id sent and the one answered. */
interface Routed {
  server: string;
  sent: string;
  answered: string;
}

interface Haproxy {
  routed(): Routed[];
  /** Resolves once the log holds `n` requests; HAProxy logs one a moment after its answer went out. */
  routedAtLeast(n: number): Promise<Routed[]>;
}

async function startHaproxy(port: number, upstreams: readonly string[]): Promise<Haproxy> {
  if (!existsSync(HAPROXY_BIN)) throw new Error(`HAProxy is not installed at ${HAPROXY_BIN}: \`apt-get install -y haproxy\` (.ci/run does)`);
  const backend = readmeBackend().replace(/10\.0\.0\.(\d):7337/g, (_match, n: string) => upstreams[Number(n) - 1] as string);
  expect(backend).not.toContain('10.0.0.');
  const dir = mkdtempSync(join(tmpdir(), 'sb-haproxy-'));
  const config = join(dir, 'haproxy.cfg');
  writeFileSync(
    config,
    `global\n  maxconn 256\n  log stderr format raw local0\n\n` +
      `defaults\n  mode http\n  log global\n  timeout connect 2s\n  timeout client 1h\n  timeout server 1h\n\n` +
      `frontend mcp\n  bind 127.0.0.1:${port}\n  log-format "routed %b/%s %hr %hs"\n  capture request header mcp-session-id len 128\n  capture response header mcp-session-id len 128\n  default_backend switchboard\n\n${backend}`,
  );
  const check = spawn(HAPROXY_BIN, ['-c', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let checkOutput = '';
  check.stdout.setEncoding('utf8').on('data', (chunk: string) => (checkOutput += chunk));
  check.stderr.setEncoding('utf8').on('data', (chunk: string) => (checkOutput += chunk));
  const checkCode = await new Promise<number | null>((resolve) => check.once('close', resolve));
  expect(checkCode, checkOutput).toBe(0);

  const child = spawn(HAPROXY_BIN, ['-db', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  });
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`haproxy did not listen:\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, ACCEPT_POLL_MS));
  }
  const routed = (): Routed[] =>
    [...stderr.matchAll(/^routed switchboard\/(\S+) \{([^}]*)\} \{([^}]*)\}$/gm)].map(([, server, sent, answered]) => ({
      server: server as string,
      sent: sent as string,
      answered: answered as string,
    }));
  const routedAtLeast = (n: number): Promise<Routed[]> =>
    new Promise((resolve) => {
      const check = (): void => {
        const log = routed();
        if (log.length < n) return;
        child.stderr.off('data', check);
        resolve(log);
      };
      child.stderr.on('data', check);
      check();
    });
  return { routed, routedAtLeast };
}

describe('the README HAProxy backend in front of two daemons', () => {
  it('sends every request of each 2025-era session to the replica that made it', async () => {
    const port = await freePort();
    // Clients name the balancer in Host, so the replicas are told its name (README, Security).
    const replicas = await Promise.all([0, 1].map(() => startDaemon({ config: { allowedHosts: [`127.0.0.1:${port}`] } })));
    const haproxy = await startHaproxy(
      port,
      replicas.map((replica) => new URL(replica.url).host),
    );
    const url = `http://127.0.0.1:${port}/mcp`;

    const outcomes: number[] = [];
    const sessionIds: string[] = [];
    // Four sessions: `initialize` goes round-robin, so two are made on each replica.
    for (let s = 0; s < 4; s++) {
      const init = await fetch(url, {
        method: 'POST',
        headers: MCP_HEADERS,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: `haproxy-${s}`, version: '1' } },
        }),
      });
      const text = await init.text();
      expect(init.status, text).toBe(200);
      const sessionId = init.headers.get('mcp-session-id') as string;
      sessionIds.push(sessionId);
      const session = { ...MCP_HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
      for (let id = 2; id < 6; id++) {
        const res = await fetch(url, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' }) });
        await res.text();
        outcomes.push(res.status);
      }
    }
    expect(outcomes).toEqual(Array.from({ length: 16 }, () => 200));
    // HAProxy logs a request once it is answered, a moment after the client has the answer.
    const log = await haproxy.routedAtLeast(20);
    expect(log).toHaveLength(20);
    // Per session: the replica that answered its initialize (the id in the response) and the one
    // of each later request (the id in the request) are one and the same.
    const owners = sessionIds.map((id) => {
      const entries = log.filter((entry) => entry.sent === id || entry.answered === id);
      expect(entries).toHaveLength(5);
      return new Set(entries.map((entry) => entry.server));
    });
    for (const owner of owners) expect(owner.size).toBe(1);
    // The sessions were made on both replicas, so no fixed route could have passed.
    expect(new Set(owners.flatMap((owner) => [...owner])).size).toBe(2);
  });
});
