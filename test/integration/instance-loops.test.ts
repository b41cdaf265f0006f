import { describe, expect, it } from 'vitest';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { waitForStatus } from '../helpers/status-watch.js';
import { freePort } from '../helpers/free-port.js';

/**
 * Issue #11 item 3: Switchboards configured as each other's upstream — two facing each other, and
 * three in a ring — stay bounded. One link per cycle is refused (`LOOP_DETECTED`, with the loop
 * in `/status`): always the one out of the daemon with the smallest instance id, so the outcome
 * is the same whoever connects first and after every reload. Real daemons on real ports, each
 * with its own echo server process; the daemons run in this process (test/helpers/daemon.ts), as
 * nothing here is about a daemon's process: what crosses between them is HTTP.
 */

interface Status {
  instance: { id: string; label: string };
  toolCount: number;
  servers: Array<{ name: string; status: string; lastError: { code: string; message: string } | null }>;
}

interface Node {
  name: string;
  port: number;
  base: string;
}

/**
 * Starts one daemon per name; each has its own echo server (`own_<name>`, 3 tools) and, as
 * `peer_<next>`, the `/mcp` of the next daemon in the list (the last one points at the first).
 */
async function startRing(names: string[]): Promise<Node[]> {
  const ports = await Promise.all(names.map(() => freePort()));
  return Promise.all(
    names.map(async (name, i) => {
      const next = (i + 1) % names.length;
      const d = await startDaemon({
        config: { port: ports[i] },
        servers: {
          [`own_${name}`]: fixtureServerConfig('echo-stdio'),
          [`peer_${names[next]}`]: { type: 'http', url: `http://127.0.0.1:${ports[next]}/mcp` },
        },
      });
      return { name, port: ports[i] as number, base: d.url };
    }),
  );
}

async function status(node: Node): Promise<Status> {
  return (await (await fetch(`${node.base}/status`)).json()) as Status;
}

async function toolNames(node: Node): Promise<string[]> {
  const body = (await (await fetch(`${node.base}/tools`)).json()) as { tools: Array<{ name: string }> };
  return body.tools.map((tool) => tool.name);
}

/**
 * What every daemon must settle on. The daemon with the smallest id refuses its link; the ring
 * becomes a chain ending at it, so going backwards from it each daemon holds one more daemon's
 * three tools than the one it aggregates.
 */
function expectedCounts(nodes: Node[], ids: Map<string, string>): { refuser: Node; counts: Map<string, number> } {
  const refuser = [...nodes].sort((a, b) => ((ids.get(a.name) as string) < (ids.get(b.name) as string) ? -1 : 1))[0] as Node;
  const counts = new Map<string, number>();
  const start = nodes.indexOf(refuser);
  for (let step = 0; step < nodes.length; step++) {
    const node = nodes[(start - step + nodes.length) % nodes.length] as Node;
    counts.set(node.name, 3 * (step + 1));
  }
  return { refuser, counts };
}

function settled(node: Node, refuser: Node, count: number, next: Node) {
  return (s: Status): boolean => {
    const peer = s.servers.find((server) => server.name === `peer_${next.name}`);
    const own = s.servers.find((server) => server.name === `own_${node.name}`);
    if (own?.status !== 'connected' || s.toolCount !== count) return false;
    return node === refuser ? peer?.status === 'failed' : peer?.status === 'connected';
  };
}

async function reload(node: Node): Promise<void> {
  const response = await fetch(`${node.base}/reload`, { method: 'POST' });
  expect(response.status).toBe(200);
}

async function checkRing(names: string[]): Promise<void> {
  const nodes = await startRing(names);
  const ids = new Map(await Promise.all(nodes.map(async (n) => [n.name, (await status(n)).instance.id] as const)));
  expect(new Set(ids.values()).size).toBe(nodes.length);
  const { refuser, counts } = expectedCounts(nodes, ids);
  const nextOf = (node: Node): Node => nodes[(nodes.indexOf(node) + 1) % nodes.length] as Node;

  const rounds: number[][] = [];
  // Round 0 reloads everyone once after the racy start (a daemon may have dialled a peer that
  // was not listening yet); rounds 1 and 2 are the two reloads whose outcome must not move.
  for (let round = 0; round < 3; round++) {
    for (const node of nodes) await reload(node);
    const settledStatuses = await Promise.all(nodes.map((node) => waitForStatus<Status>(node.base, settled(node, refuser, counts.get(node.name) as number, nextOf(node)))));
    rounds.push(settledStatuses.map((s) => s.toolCount));
    for (const node of nodes) {
      const names = await toolNames(node);
      // Every daemon keeps its own server's tools; no name went through the same Switchboard
      // twice, and none of its own tools came back to it through the others.
      expect(names).toEqual(expect.arrayContaining([`mcp_own_${node.name}_echo`, `mcp_own_${node.name}_add`]));
      expect(names.filter((name) => /(mcp_peer_[a-z]_).*\1/.test(name))).toEqual([]);
      expect(names.filter((name) => name.includes(`mcp_own_${node.name}_`) && name.startsWith('mcp_peer_'))).toEqual([]);
    }
    const refused = settledStatuses[nodes.indexOf(refuser)]?.servers.find((s) => s.name === `peer_${nextOf(refuser).name}`);
    const labels = [refuser, ...walkFrom(nextOf(refuser), refuser, nextOf)].map((n) => `127.0.0.1:${n.port}`);
    expect(refused?.lastError).toEqual({
      code: 'LOOP_DETECTED',
      message: `Refusing MCP server "peer_${nextOf(refuser).name}": loop: ${[...labels, labels[0]].join(' → ')}`,
    });
  }
  expect(rounds[1]).toEqual(rounds[0]);
  expect(rounds[2]).toEqual(rounds[0]);
  expect(rounds[0]).toEqual(nodes.map((n) => counts.get(n.name)));
}

/** The nodes from `start` following links until just before `stop`. */
function walkFrom(start: Node, stop: Node, nextOf: (node: Node) => Node): Node[] {
  const path: Node[] = [];
  for (let node = start; node !== stop; node = nextOf(node)) path.push(node);
  return path;
}

describe('loops between Switchboards (real daemons on real ports)', () => {
  it("two daemons configured as each other's upstream: one link refused, counts stable across reloads", async () => {
    await checkRing(['a', 'b']);
  }, 60_000);

  it('three daemons in a ring: one link refused, counts stable across reloads', async () => {
    await checkRing(['a', 'b', 'c']);
  }, 90_000);
});
