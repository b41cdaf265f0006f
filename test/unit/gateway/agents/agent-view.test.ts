import { describe, expect, it } from 'vitest';
import { agentRefOf } from '../../../../src/gateway/agents/agent-ref.js';
import { checkGlob, compileAgentView } from '../../../../src/gateway/agents/agent-view.js';

const tool = (name: string, server: string, annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean }) => ({ name, server, annotations });

describe('agent view', () => {
  it('an empty scope sees everything and says so', () => {
    const view = compileAgentView({});
    expect(view.everything).toBe(true);
    expect(view.allowsTool(tool('fs_write', 'fs'))).toBe(true);
  });

  it('server globs pick servers; tool globs and exclude pick the names agents see', () => {
    const view = compileAgentView({ servers: ['git*', 'docs'], tools: ['git_*', 'docs_search'], exclude: ['git_push*'] });
    expect(view.everything).toBe(false);
    expect(view.allowsServer('github')).toBe(true);
    expect(view.allowsServer('fs')).toBe(false);
    expect(view.allowsTool(tool('git_log', 'git'))).toBe(true);
    expect(view.allowsTool(tool('git_push_force', 'git'))).toBe(false);
    expect(view.allowsTool(tool('docs_fetch', 'docs'))).toBe(false);
    expect(view.allowsTool(tool('docs_search', 'docs'))).toBe(true);
    expect(view.allowsTool(tool('git_log', 'fs'))).toBe(false);
  });

  it('access tiers follow the annotations with the MCP defaults', () => {
    const read = compileAgentView({ access: 'read' });
    const write = compileAgentView({ access: 'write' });
    const plain = tool('t', 's');
    const readOnly = tool('t', 's', { readOnlyHint: true });
    const additive = tool('t', 's', { destructiveHint: false });
    const destructive = tool('t', 's', { destructiveHint: true });
    expect([read.allowsTool(plain), read.allowsTool(readOnly), read.allowsTool(additive)]).toEqual([false, true, false]);
    expect([write.allowsTool(plain), write.allowsTool(readOnly), write.allowsTool(additive), write.allowsTool(destructive)]).toEqual([false, true, true, false]);
  });

  it('equal scopes share a key, different ones do not', () => {
    expect(compileAgentView({ servers: ['a'] }).key).toBe(compileAgentView({ servers: ['a'] }).key);
    expect(compileAgentView({ servers: ['a'] }).key).not.toBe(compileAgentView({ servers: ['a'], access: 'read' }).key);
  });

  it('a malformed glob is reported', () => {
    expect(() => checkGlob('[abc')).toThrow();
    expect(() => checkGlob('')).toThrow();
    expect(() => checkGlob('git_*')).not.toThrow();
  });

  it('a list that does not compile fails closed: an allow list matches nothing, exclude everything', () => {
    expect(compileAgentView({ servers: ['git', 'a['] }).allowsServer('git')).toBe(false);
    expect(compileAgentView({ tools: ['[x'] }).allowsTool(tool('x', 's'))).toBe(false);
    expect(compileAgentView({ exclude: ['(x'] }).allowsTool(tool('y', 's'))).toBe(false);
  });

  it('an agent ref is made once per settings object; new settings get a new view', () => {
    const settings = { servers: ['git'] };
    const ref = agentRefOf({ name: 'a', settings });
    expect(agentRefOf({ name: 'a', settings })).toBe(ref);
    expect(ref.view?.allowsServer('git')).toBe(true);
    const changed = agentRefOf({ name: 'a', settings: { servers: ['fs'] } });
    expect(changed.view?.allowsServer('git')).toBe(false);
    expect(agentRefOf({ name: 'b', settings })).toMatchObject({ name: 'b' });
    expect(agentRefOf({ name: 'all', settings: {} }).view).toBeUndefined();
  });
});
