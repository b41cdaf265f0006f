import { describe, expect, it } from 'vitest';
import type { ClusterChannel, ClusterMessage } from '../../../src/cluster/cluster-channel.js';
import { Cluster, type ClusterEffects } from '../../../src/cluster/cluster.js';
import type { ReplicaHeartbeats } from '../../../src/cluster/replica-heartbeats.js';
import { EventBus, type StampedEvent } from '../../../src/events/event-bus.js';

/**
 * Issue #34 item 5: replicas apply each other's operator actions from the events the owners
 * publish on the bus, relayed by the cluster — no route is read. Two `Cluster`s with real buses
 * over an in-memory channel that carries what NOTIFY would (JSON text, never back to its sender).
 */

type Call = [string, ...unknown[]];

function wire(): { join(id: string): ClusterChannel } {
  const listeners = new Map<string, (message: ClusterMessage) => void>();
  return {
    join(id) {
      const channel = {
        start: async () => undefined,
        close: async () => undefined,
        onReconnect: () => () => undefined,
        onMessage: (listener: (message: ClusterMessage) => void) => {
          listeners.set(id, listener);
          return () => listeners.delete(id);
        },
        send: async (message: Omit<ClusterMessage, 'from'>) => {
          const text = JSON.stringify({ ...message, from: id });
          for (const [other, listener] of listeners) if (other !== id) listener(JSON.parse(text) as ClusterMessage);
        },
      };
      return channel as unknown as ClusterChannel;
    },
  };
}

async function replica(channels: ReturnType<typeof wire>, id: string) {
  const bus = new EventBus({ replica: id });
  const calls: Call[] = [];
  const warnings: unknown[] = [];
  const effects: ClusterEffects = {
    refreshAgents: async () => void calls.push(['refreshAgents']),
    approveTools: (server, tools, follows) => void calls.push(['approveTools', server, tools, follows]),
    reload: async (server, force, follows) => void calls.push(['reload', server, force, follows]),
    resumeAfterSignIn: (server) => void calls.push(['resumeAfterSignIn', server]),
    signedOut: (server) => void calls.push(['signedOut', server]),
  };
  const heartbeats = { start: async () => undefined, stop: async () => undefined } as unknown as ReplicaHeartbeats;
  const cluster = new Cluster({
    replicaId: id,
    channel: channels.join(id),
    heartbeats,
    bus,
    effects,
    logger: { info() {}, debug() {}, warn: (entry: unknown) => void warnings.push(entry) },
  });
  await cluster.start();
  const seen: StampedEvent[] = [];
  bus.subscribe((event) => seen.push(event));
  return { bus, calls, seen, warnings };
}

async function twoReplicas() {
  const channels = wire();
  return [await replica(channels, 'aaaaaaaaaaaa'), await replica(channels, 'bbbbbbbbbbbb')] as const;
}

/** Lets the channel's sends (promises) run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("the cluster relays the owners' bus events", () => {
  it("applies another replica's agent change, approval, reload, sign-in and sign-out, and shows each with the replica it came from", async () => {
    const [a, b] = await twoReplicas();
    a.bus.publish({ type: 'agent.changed', agent: 'bot', change: 'revoked' });
    a.bus.publish({ type: 'pins.changed', server: 'pin', tools: [{ name: 'target', hash: 'h1' }] });
    a.bus.publish({ type: 'reload.started', server: null, force: true });
    a.bus.publish({ type: 'reload.started', server: 'echo' });
    a.bus.publish({ type: 'oauth.signed_in', server: 'github' });
    a.bus.publish({ type: 'oauth.signed_out', server: 'github' });
    await settle();

    expect(b.calls).toEqual([
      ['refreshAgents'],
      ['approveTools', 'pin', [{ name: 'target', hash: 'h1' }], 'aaaaaaaaaaaa'],
      ['reload', null, true, 'aaaaaaaaaaaa'],
      ['reload', 'echo', false, 'aaaaaaaaaaaa'],
      ['resumeAfterSignIn', 'github'],
      ['signedOut', 'github'],
    ]);
    expect(b.seen.map((e) => [e.type, e.replica])).toEqual([
      ['agent.changed', 'aaaaaaaaaaaa'],
      ['pins.changed', 'aaaaaaaaaaaa'],
      ['reload.started', 'aaaaaaaaaaaa'],
      ['reload.started', 'aaaaaaaaaaaa'],
      ['oauth.signed_in', 'aaaaaaaaaaaa'],
      ['oauth.signed_out', 'aaaaaaaaaaaa'],
    ]);
    // Nothing came back: A applies nothing of its own.
    expect(a.calls).toEqual([]);
  });

  it("shows what a replica did to follow another's action, without applying it again (no echo)", async () => {
    const [a, b] = await twoReplicas();
    b.bus.publish({ type: 'reload.started', server: null, follows: 'aaaaaaaaaaaa' });
    b.bus.publish({ type: 'reload.finished', server: null, ok: true });
    b.bus.publish({ type: 'pins.changed', server: 'pin', tools: [{ name: 'target', hash: 'h1' }], follows: 'aaaaaaaaaaaa' });
    await settle();
    expect(a.seen.map((e) => [e.type, e.replica])).toEqual([
      ['reload.started', 'bbbbbbbbbbbb'],
      ['reload.finished', 'bbbbbbbbbbbb'],
      ['pins.changed', 'bbbbbbbbbbbb'],
    ]);
    expect(a.calls).toEqual([]);
  });

  it("keeps a replica's server events its own, and neither shows nor applies a malformed action", async () => {
    const [a, b] = await twoReplicas();
    a.bus.publish({ type: 'server.status', server: 'echo', status: 'connected', previous: 'connecting', toolCount: 1 });
    a.bus.publish({ type: 'tools.changed', server: 'echo', added: ['x'], removed: [], toolCount: 1, cause: 'startup', deferred: false });
    a.bus.publish({ type: 'pins.changed', server: 'pin', tools: 'all' } as never);
    await settle();
    expect(b.seen).toEqual([]);
    expect(b.calls).toEqual([]);
    expect(b.warnings).toEqual([expect.objectContaining({ from: 'aaaaaaaaaaaa', type: 'pins.changed' })]);
  });
});
