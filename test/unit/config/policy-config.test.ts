import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadDaemonConfig, parseDaemonConfig } from '../../../src/config/load.js';
import { loadPolicyLanguage } from '../../../src/config/policy-cel.js';
import { DaemonConfigSchema } from '../../../src/config/schema.js';
import { tempDir } from '../../helpers/process.js';

// First in the file: nothing has loaded CEL yet (no module imports it statically, issue #44).
describe('policies in a config file, CEL loaded on demand', () => {
  it('loadDaemonConfig loads CEL for a file with policies, so a bad rule is still a config issue at load', async () => {
    const dir = await tempDir();
    const path = join(dir, 'sb.json');
    await writeFile(path, JSON.stringify({ policies: [{ name: 'sql', when: 'args.sql.startsWith(', effect: 'deny' }] }));
    await expect(loadDaemonConfig({ path, env: {}, home: dir, cwd: dir })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: `${path}: policies.0.when: policy "sql": CEL does not compile at 1:21: Unexpected token: EOF`,
    });
    await writeFile(path, JSON.stringify({ policies: [{ name: 'ok', when: 'args.n > 1', effect: 'deny' }] }));
    expect((await loadDaemonConfig({ path, env: {}, home: dir, cwd: dir })).policies.map((rule) => rule.name)).toEqual(['ok']);
  });
});

/** Argument policies in the config (issue #40 item 1): checked at load, each problem naming the file, the rule and where. */
describe('policies config', () => {
  // A synchronous parse is handed a loaded CEL, as every config load (and the library's entry) awaits it first.
  beforeAll(() => loadPolicyLanguage());
  const load = (policies: unknown) => () => parseDaemonConfig({ policies }, { path: '/etc/sb.json', env: {}, home: '/home/x' });

  it('defaults to none, and fills a rule in: match everything, when true, enforced', () => {
    expect(DaemonConfigSchema.parse({}).policies).toEqual([]);
    expect(DaemonConfigSchema.parse({ policies: [{ name: 'r', effect: 'deny' }] }).policies).toEqual([{ name: 'r', match: {}, when: 'true', effect: 'deny', mode: 'enforce' }]);
  });

  it('a rule that does not parse is a config issue at load with file, rule and line:column', () => {
    expect(load([{ name: 'sql', when: 'args.sql.startsWith(', effect: 'deny' }])).toThrow(
      '/etc/sb.json: policies.0.when: policy "sql": CEL does not compile at 1:21: Unexpected token: EOF',
    );
  });

  it('a rule that does not type-check is one too: an unknown variable, an operator over the wrong types, a non-bool result', () => {
    expect(load([{ name: 'a', when: 'arg.sql == "x"', effect: 'deny' }])).toThrow('policies.0.when: policy "a": CEL does not compile at 1:1: Unknown variable: arg');
    expect(
      load([
        { name: 'ok', effect: 'allow' },
        { name: 'b', when: '1 + "a" == 2', effect: 'deny' },
      ]),
    ).toThrow('policies.1.when: policy "b": CEL does not compile at 1:1: no such overload: int + string');
    expect(load([{ name: 'c', when: '"yes"', effect: 'deny' }])).toThrow('policy "c": CEL does not compile: must yield a bool, yields string');
  });

  it('names must be unique, effects and modes known, globs valid', () => {
    const issues = (policies: unknown) => DaemonConfigSchema.safeParse({ policies }).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(
      issues([
        { name: 'x', effect: 'deny' },
        { name: 'x', effect: 'allow' },
      ]),
    ).toEqual(['policies.1.name: duplicate policy name "x"']);
    expect(issues([{ name: 'x', effect: 'block' }])?.[0]).toMatch(/^policies\.0\.effect: /);
    expect(issues([{ name: 'x', effect: 'deny', mode: 'dry' }])?.[0]).toMatch(/^policies\.0\.mode: /);
    expect(issues([{ name: 'x', effect: 'deny', match: { tools: ['[a'] } }])?.[0]).toMatch(/^policies\.0\.match\.tools\.0: invalid glob "\[a"/);
  });
});
