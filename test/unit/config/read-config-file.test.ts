import { describe, expect, it } from 'vitest';
import { positionAt, readConfigFile } from '../../../src/config/read-config-file.js';
import { makeTree } from './temp-tree.js';

describe('readConfigFile', () => {
  it('reports a missing file as missing, not as an error', async () => {
    const t = await makeTree();
    expect(await readConfigFile(`${t.home}/nope.json`, 'json')).toEqual({ kind: 'missing' });
  });

  it('names the file, line and column of bad JSON, without quoting its text', async () => {
    const t = await makeTree();
    const path = await t.write('home/bad.json', '{\n  "mcpServers": {\n    "a": {"command": "sk-SECRET" "x"}\n  }\n}\n');
    const result = await readConfigFile(path, 'json');
    expect(result.kind).toBe('error');
    if (result.kind !== 'error') return;
    expect(result.warning).toMatchObject({ path, line: 3, column: 34 });
    expect(result.warning.message).toContain(`${path}:3:34: invalid JSON`);
    expect(result.warning.message).not.toContain('sk-SECRET');
  });

  it('rejects comments in strict JSON but accepts them and trailing commas in JSONC', async () => {
    const t = await makeTree();
    const path = await t.write('home/c.json', '{\n  // note\n  "a": [1, 2,],\n}\n');
    const strict = await readConfigFile(path, 'json');
    expect(strict).toMatchObject({ kind: 'error', warning: { line: 2, column: 3 } });
    expect(await readConfigFile(path, 'jsonc')).toEqual({ kind: 'ok', value: { a: [1, 2] } });
  });

  it('names the line and column of bad TOML, without the code excerpt', async () => {
    const t = await makeTree();
    const path = await t.write('home/c.toml', 'a = "SECRET"\n[mcp_servers.x\ncommand = "y"\n');
    const result = await readConfigFile(path, 'toml');
    expect(result).toMatchObject({ kind: 'error', warning: { path, line: 2 } });
    if (result.kind !== 'error') return;
    expect(result.warning.message).toMatch(new RegExp(`^${path}:2:\\d+: invalid TOML: `));
    expect(result.warning.message).not.toContain('SECRET');
  });

  it('computes 1-based positions from offsets', () => {
    expect(positionAt('ab\ncd', 0)).toEqual({ line: 1, column: 1 });
    expect(positionAt('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
  });
});
