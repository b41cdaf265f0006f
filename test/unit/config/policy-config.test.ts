import { describe, expect, it } from 'vitest';
import { parseDaemonConfig } from '../../../src/config/load.js';
import { DaemonConfigSchema } from '../../../src/config/schema.js';

/** Argument policies in the config (issue #40 item 1): checked at load, each problem naming the file, the rule and where. */
describe('policies config', () => {
  const load = (policies: unknown) => () => parseDaemonConfig({ policies }, { path: '/etc/sb.json', env: {}, home: '/home/x' });

  it('defaults to none, and fills a rule in: match everything, when true, enforced', () => {
    expect(DaemonConfigSchema.parse({}).policies).toEqual([]);
    expect(DaemonConfigSchema.parse({ policies: [{ name: 'r', effect: 'deny' }] }).policies).toEqual([{ name: 'r', match: {}, when: 'true', effect: 'deny', mode: 'enforce' }]);
  });

  it('a rule that does not parse is a config issue at load with file, rule and line:column', () => {
    expect(load([{ name: 'sql', when: 'args.sql.startsWith(', effect: 'deny' }])).toThrow('/etc/sb.json: policies.0.when: policy "sql": CEL does not compile at 1:21: Unexpected token: EOF');
  });

  it('a rule that does not type-check is one too: an unknown variable, an operator over the wrong types, a non-bool result', () => {
    expect(load([{ name: 'a', when: 'arg.sql == "x"', effect: 'deny' }])).toThrow('policies.0.when: policy "a": CEL does not compile at 1:1: Unknown variable: arg');
    expect(load([{ name: 'ok', effect: 'allow' }, { name: 'b', when: '1 + "a" == 2', effect: 'deny' }])).toThrow('policies.1.when: policy "b": CEL does not compile at 1:1: no such overload: int + string');
    expect(load([{ name: 'c', when: '"yes"', effect: 'deny' }])).toThrow('policy "c": CEL does not compile: must yield a bool, yields string');
  });

  it('names must be unique, effects and modes known, globs valid', () => {
    const issues = (policies: unknown) => DaemonConfigSchema.safeParse({ policies }).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(issues([{ name: 'x', effect: 'deny' }, { name: 'x', effect: 'allow' }])).toEqual(['policies.1.name: duplicate policy name "x"']);
    expect(issues([{ name: 'x', effect: 'block' }])?.[0]).toMatch(/^policies\.0\.effect: /);
    expect(issues([{ name: 'x', effect: 'deny', mode: 'dry' }])?.[0]).toMatch(/^policies\.0\.mode: /);
    expect(issues([{ name: 'x', effect: 'deny', match: { tools: ['[a'] } }])?.[0]).toMatch(/^policies\.0\.match\.tools\.0: invalid glob "\[a"/);
  });
});
