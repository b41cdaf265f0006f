import { describe, expect, it } from 'vitest';
import { EventHub, type EventSink, type WireEvent } from '../../../../src/http/ws/event-hub.js';
import { scopeEvent } from '../../../../src/gateway/agents/event-scope.js';
import { listChangedFor } from '../../../../src/http/endpoint/session-relay.js';
import { compileAgentView } from '../../../../src/gateway/agents/agent-view.js';
import type { DaemonEvent } from '../../../../src/events/daemon-events.js';
import { EventBus, type StampedEvent } from '../../../../src/events/event-bus.js';

const tools = [
  { name: 'git_log', server: 'git', annotations: { readOnlyHint: true } },
  { name: 'git_push', server: 'git' },
  { name: 'fs_read', server: 'fs', annotations: { readOnlyHint: true } },
];
const catalogue = {
  version: 3,
  list: () => tools,
  get: (name: string) => tools.find((tool) => tool.name === name),
  itemsOf: (server: string) => tools.filter((tool) => tool.server === server),
};
const gitReader = { name: 'reader', view: compileAgentView({ servers: ['git'], access: 'read' }) };
const everything = { name: 'all' };

const stamp = (event: DaemonEvent): StampedEvent => ({ ...event, seq: 1, ts: '2026-01-01T00:00:00.000Z' }) as StampedEvent;
const status = (server: string): DaemonEvent => ({ type: 'server.status', server, status: 'connected', previous: 'connecting', toolCount: 2 });

class ArraySink implements EventSink {
  readonly raw: string[] = [];
  bufferedAmount = 0;
  send(data: string): void {
    this.raw.push(data);
  }
  close(): void {}
  get messages(): WireEvent[] {
    return this.raw.map((data) => JSON.parse(data) as WireEvent);
  }
}

describe('the event feed of an agent', () => {
  it('drops events about servers outside the scope and narrows tool names and counts to the view', () => {
    expect(scopeEvent(stamp(status('fs')), gitReader, catalogue)).toBeUndefined();
    expect(scopeEvent(stamp(status('git')), gitReader, catalogue)).toMatchObject({ server: 'git', toolCount: 1 });
    const changed = stamp({ type: 'tools.changed', server: 'git', added: ['git_log', 'git_push'], removed: [], toolCount: 2, cause: 'list_changed', deferred: false });
    expect(scopeEvent(changed, gitReader, catalogue)).toMatchObject({ added: ['git_log'], removed: [], toolCount: 1 });
    const onlyHidden = stamp({ type: 'tools.changed', server: 'git', added: ['git_push'], removed: [], toolCount: 2, cause: 'list_changed', deferred: false });
    expect(scopeEvent(onlyHidden, gitReader, catalogue)).toBeUndefined();
    expect(scopeEvent(stamp({ type: 'server.log', server: 'fs', stream: 'stderr', lines: ['x'] }), gitReader, catalogue)).toBeUndefined();
  });

  it('never carries operator-only kinds, nor the calls of other agents', () => {
    const approval = stamp({
      type: 'approval.requested',
      id: '1',
      server: 'git',
      tool: 'push',
      name: 'git_push',
      arguments: {},
      argumentsDigest: 'd',
      mode: 'held',
      expiresAt: 'x',
    });
    expect(scopeEvent(approval, everything, catalogue)).toBeUndefined();
    expect(scopeEvent(stamp({ type: 'tools.held', server: 'git', tools: [], heldCount: 1 }), everything, catalogue)).toBeUndefined();
    const call = (agent: string): StampedEvent =>
      stamp({ type: 'call.finished', agent, transport: 'rest', server: 'git', kind: 'tools/call', name: 'git_log', outcome: 'ok', durationMs: 1, argBytes: 0, resultBytes: 0 });
    expect(scopeEvent(call('reader'), gitReader, catalogue)).toBeDefined();
    expect(scopeEvent(call('other'), gitReader, catalogue)).toBeUndefined();
    // What operators change (issue #34 item 5): the names of other agents, approvals, sign-ins.
    expect(scopeEvent(stamp({ type: 'agent.changed', agent: 'reader', change: 'rotated' }), everything, catalogue)).toBeUndefined();
    expect(scopeEvent(stamp({ type: 'pins.changed', server: 'git', tools: [{ name: 'push', hash: 'h' }] }), everything, catalogue)).toBeUndefined();
    expect(scopeEvent(stamp({ type: 'oauth.signed_in', server: 'git' }), everything, catalogue)).toBeUndefined();
  });

  it("closes an agent's feeds when the registry says its keys ended (rotated, revoked), whichever replica told it", () => {
    const bus = new EventBus({ replica: 'aaaaaaaaaaaa' });
    const hub = new EventHub({ bus, manager: { listServers: () => [], getCatalogue: () => catalogue }, runtime: { state: 'ready' } });
    const closed: Array<[string, number]> = [];
    const sinkOf = (name: string): EventSink => Object.assign(new ArraySink(), { close: (code: number) => void closed.push([name, code]) });
    hub.subscribe(sinkOf('reader'), { agent: gitReader });
    hub.subscribe(sinkOf('all'), { agent: everything });
    hub.subscribe(sinkOf('operator'));
    bus.publish({ type: 'agent.changed', agent: 'reader', change: 'added' });
    expect(closed).toEqual([]);
    bus.publish({ type: 'agent.changed', agent: 'reader', change: 'rotated' });
    bus.publish({ type: 'agent.changed', agent: 'all', change: 'revoked', replica: 'bbbbbbbbbbbb' } as never);
    expect(closed).toEqual([
      ['reader', 4401],
      ['all', 4401],
    ]);
    expect(hub.subscriberCount).toBe(1);
    hub.stop();
  });

  it('keeps daemon-wide events only as far as they reveal nothing outside the scope', () => {
    const finished = stamp({ type: 'reload.finished', server: null, ok: false, error: { code: 'DISCOVERY_FAILED', message: '/home/x/.cursor/mcp.json: bad' } });
    expect(scopeEvent(finished, gitReader, catalogue)).not.toHaveProperty('error');
    const config = stamp({ type: 'config.changed', cause: 'watch', files: ['/a'], added: ['fs'], removed: [], changed: ['git'], kept: [] });
    expect(scopeEvent(config, gitReader, catalogue)).toMatchObject({ files: [], added: [], changed: ['git'] });
    const other = stamp({ type: 'config.changed', cause: 'watch', files: ['/a'], added: ['fs'], removed: [], changed: [], kept: [] });
    expect(scopeEvent(other, gitReader, catalogue)).toBeUndefined();
  });

  it('filters the hello, the live events and a replay from seq alike', () => {
    const bus = new EventBus();
    const servers = ['git', 'fs'].map((name) => ({ name, toolCount: 2 })) as never;
    const hub = new EventHub({ bus, manager: { listServers: () => servers, getCatalogue: () => catalogue }, runtime: { state: 'ready' } });
    const live = new ArraySink();
    hub.subscribe(live, { agent: gitReader });
    bus.publish(status('fs'));
    bus.publish(status('git'));
    const replay = new ArraySink();
    hub.subscribe(replay, { since: 0, agent: gitReader });
    const operator = new ArraySink();
    hub.subscribe(operator, { since: 0 });

    const [hello, ...events] = live.messages;
    expect(hello).toMatchObject({ type: 'hello', toolCount: 1, servers: [{ name: 'git', toolCount: 1 }] });
    expect(events.map((e) => (e as { server?: string }).server)).toEqual(['git']);
    expect(replay.messages.map((e) => (e as { server?: string }).server)).toEqual(['git']);
    expect(operator.messages.map((e) => (e as { server?: string }).server)).toEqual(['fs', 'git']);
    hub.stop();
  });
});

describe('list_changed for a session with a view', () => {
  it('is sent only when the digest of its view moved', () => {
    expect(listChangedFor('a', 'a')).toBe(false);
    expect(listChangedFor('a', 'b')).toBe(true);
    expect(listChangedFor(undefined, 'b')).toBe(true);
  });
});
