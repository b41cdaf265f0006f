import { beforeAll, describe, expect, it } from 'vitest';
import { loadPolicyLanguage } from '../../../../src/config/policy-cel.js';
import { PolicyRuleSchema } from '../../../../src/config/policy-schema.js';
import { PolicySet, type PolicyInput, type ShadowHit } from '../../../../src/gateway/policies/policy-set.js';

/** The rule set's decisions (issue #40): first enforced match wins, default allow, shadow rules reported only, failures deny. */
const rules = (...input: unknown[]) => new PolicySet(input.map((rule) => PolicyRuleSchema.parse(rule)));

const input = (over: Partial<PolicyInput> = {}): PolicyInput => ({
  agent: 'analyst',
  claims: {},
  server: 'db',
  tool: 'query',
  exposed: 'mcp_db_query',
  annotations: {},
  args: { sql: 'SELECT 1' },
  method: 'tools/call',
  now: Date.parse('2026-12-05T10:00:00Z'),
  ...over,
});

describe('PolicySet', () => {
  beforeAll(() => loadPolicyLanguage());
  it('allows when no rule applies', () => {
    expect(rules().decide(input())).toEqual({ effect: 'allow' });
    expect(rules({ name: 'x', when: 'args.sql.startsWith("DROP")', effect: 'deny' }).decide(input())).toEqual({ effect: 'allow' });
  });

  it('the first rule that applies decides, later ones unread', () => {
    const set = rules({ name: 'reads', when: 'args.sql.startsWith("SELECT")', effect: 'allow' }, { name: 'rest', effect: 'deny', reason: 'only SELECT' });
    expect(set.decide(input())).toEqual({ effect: 'allow', rule: 'reads' });
    expect(set.decide(input({ args: { sql: 'UPDATE t' } }))).toEqual({ effect: 'deny', rule: 'rest', reason: 'only SELECT' });
  });

  it("match: agents, servers and tools (the exposed name or the server's own) must all match; a resource read matches no tools", () => {
    const set = rules({ name: 'm', match: { agents: ['ana*'], servers: ['db'], tools: ['query'] }, effect: 'deny' });
    expect(set.decide(input()).effect).toBe('deny');
    expect(set.decide(input({ tool: 'other', exposed: 'query' })).effect).toBe('deny');
    expect(set.decide(input({ agent: 'bob' })).effect).toBe('allow');
    expect(set.decide(input({ agent: undefined })).effect).toBe('allow');
    expect(set.decide(input({ server: 'files' })).effect).toBe('allow');
    expect(set.decide(input({ method: 'resources/read', tool: '', exposed: '', uri: 'x://y', args: { uri: 'x://y' } })).effect).toBe('allow');
  });

  it('sees agent claims, tool annotations, the request and now', () => {
    const set = rules(
      { name: 'team', when: 'has(agent.claims.team) && agent.claims.team == "ops" && has(tool.annotations.destructiveHint) && tool.annotations.destructiveHint', effect: 'deny' },
      { name: 'after-hours', when: 'request.method == "prompts/get" && now.getHours("UTC") >= 9', effect: 'approve' },
    );
    expect(set.decide(input({ claims: { team: 'ops' }, annotations: { destructiveHint: true } })).effect).toBe('deny');
    expect(set.decide(input({ claims: { team: 'dev' }, annotations: { destructiveHint: true } })).effect).toBe('allow');
    expect(set.decide(input({ method: 'prompts/get' }))).toEqual({ effect: 'approve', rule: 'after-hours', reason: 'denied by policy' });
  });

  it('a shadow rule is reported and never decides; later rules still do', () => {
    const hits: ShadowHit[] = [];
    const set = rules({ name: 'trial', mode: 'shadow', when: 'args.sql.contains("1")', effect: 'deny' }, { name: 'real', when: 'args.sql.contains("2")', effect: 'deny' });
    expect(set.decide(input(), (hit) => hits.push(hit))).toEqual({ effect: 'allow' });
    expect(set.decide(input({ args: { sql: 'SELECT 12' } }), (hit) => hits.push(hit))).toMatchObject({ effect: 'deny', rule: 'real' });
    expect(hits).toEqual([
      { rule: 'trial', effect: 'deny' },
      { rule: 'trial', effect: 'deny' },
    ]);
  });

  it('a when that fails to evaluate denies (fail closed) and is counted; in shadow it is a would-be denial', () => {
    const set = rules({ name: 'needs-sql', when: 'args.sql.startsWith("S")', effect: 'allow' });
    expect(set.decide(input({ args: {} }))).toEqual({ effect: 'deny', rule: 'needs-sql', reason: 'the rule could not be evaluated (denied by policy)', failed: true });
    expect(set.decide(input({ args: { sql: 5 } })).effect).toBe('deny');
    expect([...set.failures()]).toEqual([['needs-sql', 2]]);
    const hits: ShadowHit[] = [];
    expect(rules({ name: 's', mode: 'shadow', when: 'args.x > 1', effect: 'allow' }).decide(input(), (hit) => hits.push(hit))).toEqual({ effect: 'allow' });
    expect(hits).toEqual([{ rule: 's', effect: 'deny', failed: true }]);
  });
});
