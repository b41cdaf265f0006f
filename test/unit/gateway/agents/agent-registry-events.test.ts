import { describe, expect, it } from 'vitest';
import { AgentRegistry } from '../../../../src/gateway/agents/agent-registry.js';
import type { DaemonEvent } from '../../../../src/events/daemon-events.js';
import { EventBus } from '../../../../src/events/event-bus.js';
import { MemoryAgentStore } from '../../../../src/store/agent-store.js';

/** Issue #34 item 5: the registry, the only writer of agents and keys, announces each change on the bus. */

const quiet = { warn() {}, error() {}, info() {} };

describe('AgentRegistry events', () => {
  it('publishes agent.changed once each add, rotate and revoke is stored — a name, never a key', async () => {
    const bus = new EventBus();
    const seen: DaemonEvent[] = [];
    const store = new MemoryAgentStore();
    const registry = new AgentRegistry({ config: {}, store, token: 'operator-token-123456', clock: { now: () => Date.UTC(2026, 0, 1) }, logger: quiet, publish: bus.publish });
    // What the store held when each event was told: another replica re-reading it on the event must find the change.
    const stored: Array<Promise<unknown>> = [];
    bus.subscribe((event) => {
      seen.push(event);
      stored.push(Promise.all([store.agents(), store.keys()]).then(([agents, keys]) => ({ agents: agents.map((a) => [a.name, a.revokedAt !== undefined]), keys: keys.length })));
    });
    await registry.loaded;

    const { key } = await registry.add('bot', { servers: ['*'] });
    const { key: rotated } = await registry.rotate('bot');
    await registry.revoke('bot');

    expect(seen).toEqual([
      expect.objectContaining({ type: 'agent.changed', agent: 'bot', change: 'added' }),
      expect.objectContaining({ type: 'agent.changed', agent: 'bot', change: 'rotated' }),
      expect.objectContaining({ type: 'agent.changed', agent: 'bot', change: 'revoked' }),
    ]);
    expect(await Promise.all(stored)).toEqual([
      { agents: [['bot', false]], keys: 1 },
      { agents: [['bot', false]], keys: 2 },
      { agents: [['bot', true]], keys: 2 },
    ]);
    const text = JSON.stringify(seen);
    for (const secret of [key, rotated, key.slice(-20), rotated.slice(-20)]) expect(text).not.toContain(secret);
  });

  it('announces nothing when a change fails, nor when it re-reads what another replica stored', async () => {
    const seen: DaemonEvent[] = [];
    const store = new MemoryAgentStore();
    const clock = { now: () => Date.UTC(2026, 0, 1) };
    const registry = new AgentRegistry({ config: {}, store, token: 'operator-token-123456', clock, logger: quiet, publish: (event) => seen.push(event) });
    await registry.loaded;
    await expect(registry.revoke('nobody')).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });

    const other = new AgentRegistry({ config: {}, store, token: 'operator-token-123456', clock, logger: quiet });
    await other.add('elsewhere', {});
    await registry.refresh();
    expect(registry.get('elsewhere')).toBeDefined();
    expect(seen).toEqual([]);
  });

  it('changes its generation the moment a key stops or starts working, before the store has it (issue #44: kept auth verdicts)', async () => {
    const store = new MemoryAgentStore();
    const clock = { now: () => Date.UTC(2026, 0, 1) };
    const registry = new AgentRegistry({ config: {}, store, token: 'operator-token-123456', clock, logger: quiet });
    await registry.loaded;
    const { key } = await registry.add('bot', {});
    const before = registry.generation;
    // Right after the revocation's in-memory step (its first await), the store not yet written.
    const revoking = registry.revoke('bot');
    await Promise.resolve();
    await Promise.resolve();
    expect(registry.authenticate(key).kind).toBe('revoked');
    expect(registry.generation).not.toBe(before);
    await revoking;

    const readBefore = registry.generation;
    const other = new AgentRegistry({ config: {}, store, token: 'operator-token-123456', clock, logger: quiet });
    await other.add('elsewhere', {});
    await registry.refresh();
    expect(registry.generation).not.toBe(readBefore);
  });
});
