import { describe, expect, it } from 'vitest';
import { confineRoots, confineRootsAnswer } from '../../../../src/upstream/transport/roots.js';
import { ServerTraffic } from '../../../../src/upstream/transport/server-traffic.js';

const root = (uri: string) => ({ uri });
const signal = new AbortController().signal;

describe('confineRoots (issue #36 item 1)', () => {
  it("keeps an agent root inside an entry root, narrows a wider one to the entry's, drops the rest", () => {
    const entry = [root('file:///srv/shared'), root('file:///srv/docs/')];
    const agent = [root('file:///srv/shared/project'), root('file:///srv/shared-not'), root('file:///home/me'), root('file:///srv'), root('file:///srv/docs')];
    expect(confineRoots(agent, entry)).toEqual([root('file:///srv/shared/project'), root('file:///srv/shared'), root('file:///srv/docs/')]);
    // One folder, however it is spelt: `…/docs` and `…/docs/` are kept once.
    expect(confineRoots([root('file:///srv/docs'), root('file:///srv')], entry)).toEqual([root('file:///srv/docs'), root('file:///srv/shared')]);
  });

  it('passes the agent roots on unchanged when the entry has none; the root folder contains everything', () => {
    expect(confineRoots([root('file:///home/me'), root('not a uri')], [])).toEqual([root('file:///home/me'), root('not a uri')]);
    expect(confineRoots([root('file:///home/me'), root('not a uri')], [root('file:///')])).toEqual([root('file:///home/me')]);
  });

  it('confines only what is shaped like a roots/list answer', () => {
    const entry = [root('file:///srv')];
    expect(confineRootsAnswer({ roots: [root('file:///etc')] }, entry)).toEqual({ roots: [] });
    const sampled = { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' };
    expect(confineRootsAnswer(sampled, entry)).toBe(sampled);
  });
});

describe('ServerTraffic roots/list', () => {
  it("answers the entry's roots without an agent, none without either, and confines an agent's answer", async () => {
    expect(await new ServerTraffic([], () => {}).answer('roots/list', undefined, signal)).toEqual({ roots: [] });
    const traffic = new ServerTraffic([root('file:///srv/shared')], () => {});
    expect(await traffic.answer('roots/list', undefined, signal)).toEqual({ roots: [root('file:///srv/shared')] });
    traffic.route(async () => ({ roots: [root('file:///srv/shared/a'), root('file:///home/me')] }));
    expect(await traffic.answer('roots/list', undefined, signal)).toEqual({ roots: [root('file:///srv/shared/a')] });
  });
});
