import { describe, expect, it } from 'vitest';
import { agentNameOf, claimAt, scopeOf } from '../../../../src/gateway/agents/jwt-claims.js';

/** Issue #40 item 4: how a verified token's claims name an agent and give its view. */

const K8S = {
  iss: 'https://kubernetes.default.svc',
  sub: 'system:serviceaccount:reports:nightly',
  'kubernetes.io': { namespace: 'reports', serviceaccount: { name: 'nightly', uid: 'a1' } },
  'https://example.com/servers': ['github', 'linear'],
};

describe('JWT claim mapping', () => {
  it('reads a claim by its whole name first, else through nested objects', () => {
    expect(claimAt(K8S, 'https://example.com/servers')).toEqual(['github', 'linear']);
    expect(claimAt(K8S, 'kubernetes.io.serviceaccount.name')).toBe('nightly');
    expect(claimAt(K8S, 'kubernetes.io.nope')).toBeUndefined();
    expect(claimAt(K8S, 'missing')).toBeUndefined();
  });

  it('names the agent from a claim or a template, refusing values that are not agent names', () => {
    expect(agentNameOf({ azp: 'billing-bot' }, 'azp')).toBe('billing-bot');
    expect(agentNameOf(K8S, '{kubernetes.io.namespace}.{kubernetes.io.serviceaccount.name}')).toBe('reports.nightly');
    expect(agentNameOf({ project_id: 42 }, 'gitlab-{project_id}')).toBe('gitlab-42');
    expect(agentNameOf(K8S, 'sub')).toBeUndefined();
    expect(agentNameOf(K8S, '{kubernetes.io.missing}-x')).toBeUndefined();
    expect(agentNameOf({ sub: ['a'] }, 'sub')).toBeUndefined();
  });

  it('gives the view from claims: lists or space-separated strings, a missing allow list allows nothing, access capped', () => {
    const view = { servers: 'https://example.com/servers', tools: 'tools', exclude: 'exclude', access: 'tier' };
    expect(scopeOf(K8S, { view })).toEqual({ servers: ['github', 'linear'], tools: [] });
    expect(scopeOf({ tools: 'a_* b_*', exclude: ['a_x'], tier: 'write' }, { view: { tools: 'tools', exclude: 'exclude', access: 'tier' } })).toEqual({
      tools: ['a_*', 'b_*'],
      exclude: ['a_x'],
      access: 'write',
    });
    // The ceiling wins over a wider claim; an unknown tier counts as read; no claim gives the ceiling.
    expect(scopeOf({ tier: 'all' }, { view: { access: 'tier' }, access: 'write' })).toEqual({ access: 'write' });
    expect(scopeOf({ tier: 'admin' }, { view: { access: 'tier' } })).toEqual({ access: 'read' });
    expect(scopeOf({}, { access: 'read' })).toEqual({ access: 'read' });
    expect(scopeOf({}, {})).toEqual({});
  });
});
