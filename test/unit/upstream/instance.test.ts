import { describe, expect, it } from 'vitest';
import {
  buildInstanceAd,
  findLoop,
  INSTANCE_META_KEY,
  loadInstanceId,
  ORIGIN_META_KEY,
  parseInstanceAd,
  withoutOwnTools,
  type InstanceAd,
} from '../../../src/upstream/instance.js';
import { MemoryStateStore } from '../../../src/store/state-store.js';

const node = (id: string, upstreams: InstanceAd[] = []): InstanceAd => ({ id, label: `host-${id}`, upstreams });
const self = (id: string) => ({ id, label: `host-${id}` });

describe('instance identity and loops', () => {
  it('keeps one id per port in the state store', async () => {
    const state = new MemoryStateStore();
    const a = await loadInstanceId(state, 7001);
    expect(await loadInstanceId(state, 7001)).toBe(a);
    expect(await state.get('instance-id:7001')).toBe(a);
    expect(await loadInstanceId(state, 7002)).not.toBe(a);
  });

  it('gives a daemon without a fixed port a fresh id every time, and keeps none', async () => {
    const state = new MemoryStateStore();
    expect(await loadInstanceId(state, undefined)).not.toBe(await loadInstanceId(state, undefined));
    expect(await state.get('instance-id:unbound')).toBeUndefined();
  });

  it('finds no loop in a tree that does not lead back', () => {
    expect(findLoop(self('m'), node('n', [node('o'), node('p', [node('q')])]))).toBeUndefined();
  });

  it('refuses a direct self-connection', () => {
    expect(findLoop(self('m'), node('m'))).toEqual({ refuse: true, message: 'loop: host-m → host-m' });
  });

  it('refuses only when this daemon holds the smallest id of the cycle', () => {
    // a → b → a: a (smaller) refuses, b keeps its link.
    expect(findLoop(self('a'), node('b', [node('a')]))).toEqual({ refuse: true, message: 'loop: host-a → host-b → host-a' });
    expect(findLoop(self('b'), node('a', [node('b')]))).toEqual({ refuse: false, message: 'loop: host-b → host-a → host-b' });
    // b → c → a → b: a is smallest, so b does not refuse.
    expect(findLoop(self('b'), node('c', [node('a', [node('b')])]))?.refuse).toBe(false);
    expect(findLoop(self('a'), node('b', [node('c', [node('a')])]))).toEqual({
      refuse: true,
      message: 'loop: host-a → host-b → host-c → host-a',
    });
  });

  it('refuses a link reaching any replica of its own cluster, whichever id is smaller, and carries the cluster in its advertisement (issue #43 item 5)', () => {
    const replica = (id: string) => ({ ...node(id), cluster: 'c1' });
    const inCluster = { ...self('z'), cluster: 'c1' };
    expect(findLoop(inCluster, replica('a'))).toEqual({ refuse: true, message: 'loop: host-z → host-a (a replica of this cluster)' });
    // Through another Switchboard, too; another cluster's replicas are no loop.
    expect(findLoop(inCluster, node('x', [replica('b')]))).toEqual({ refuse: true, message: 'loop: host-z → host-x → host-b (a replica of this cluster)' });
    expect(findLoop(inCluster, { ...node('y'), cluster: 'c2' })).toBeUndefined();
    const ad = buildInstanceAd(inCluster, [replica('a')]);
    expect(parseInstanceAd({ [INSTANCE_META_KEY]: ad })).toEqual({
      id: 'z',
      label: 'host-z',
      cluster: 'c1',
      upstreams: [{ id: 'a', label: 'host-a', cluster: 'c1', upstreams: [] }],
    });
  });

  it('reads the advertisement bounded in depth and size, and ignores junk', () => {
    let deep = node('leaf');
    for (let i = 0; i < 20; i++) deep = node(`n${i}`, [deep]);
    const parsed = parseInstanceAd({ [INSTANCE_META_KEY]: deep }) as InstanceAd;
    let depth = 0;
    for (let n: InstanceAd | undefined = parsed; n; n = n.upstreams[0]) depth++;
    expect(depth).toBe(8);
    const wide = node(
      'root',
      Array.from({ length: 200 }, (_, i) => node(`w${i}`)),
    );
    expect((parseInstanceAd({ [INSTANCE_META_KEY]: wide }) as InstanceAd).upstreams.length).toBeLessThanOrEqual(63);
    for (const junk of [undefined, {}, { [INSTANCE_META_KEY]: 'x' }, { [INSTANCE_META_KEY]: { id: 5, label: 'l' } }]) {
      expect(parseInstanceAd(junk as Record<string, unknown> | undefined)).toBeUndefined();
    }
    expect(buildInstanceAd(self('me'), [node('u', [node('v')])])).toEqual(node('me', [node('u', [node('v')])]).valueOf() as InstanceAd);
  });

  it('drops tools whose origin includes this daemon, keeps the rest untouched', () => {
    const mine = { name: 'x', inputSchema: { type: 'object' as const }, _meta: { [ORIGIN_META_KEY]: ['b', 'me'] } };
    const theirs = { name: 'y', inputSchema: { type: 'object' as const }, _meta: { [ORIGIN_META_KEY]: ['b'] } };
    const plain = { name: 'z', inputSchema: { type: 'object' as const } };
    expect(withoutOwnTools([mine, theirs, plain], 'me')).toEqual([theirs, plain]);
    const untouched = [theirs, plain];
    expect(withoutOwnTools(untouched, 'me')).toBe(untouched);
  });
});
