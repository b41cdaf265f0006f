import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ServerConfig } from '../../../src/config/types.js';
import { canonicalJson, configHash } from '../../../src/config/config-hash.js';

const config: ServerConfig = {
  type: 'stdio',
  command: 'node',
  args: ['server.js', '--port', '1'],
  env: { B_TOKEN: '${TOKEN}', A_MODE: 'fast', '10': 'x', '2': 'y' },
  cwd: '/srv',
  timeout: 1000,
};

describe('configHash', () => {
  it('is SHA-256 hex of the sorted-key JSON', () => {
    expect(canonicalJson({ command: 'node', args: ['a'], env: { b: '1', a: '2' } })).toBe('{"args":["a"],"command":"node","env":{"a":"2","b":"1"}}');
    const expected = createHash('sha256').update('{"args":["a"],"command":"node"}').digest('hex');
    expect(configHash({ command: 'node', args: ['a'] })).toBe(expected);
    expect(configHash(config)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('does not change when keys are reordered at any depth', () => {
    const reordered: ServerConfig = {
      timeout: 1000,
      env: { '2': 'y', A_MODE: 'fast', B_TOKEN: '${TOKEN}', '10': 'x' },
      cwd: '/srv',
      args: ['server.js', '--port', '1'],
      command: 'node',
      type: 'stdio',
    };
    expect(configHash(reordered)).toBe(configHash(config));
  });

  it('drops undefined fields', () => {
    expect(configHash({ ...config, url: undefined, headers: undefined })).toBe(configHash(config));
  });

  it('changes with any value, including the order of args', () => {
    const hashes = new Set([
      configHash(config),
      configHash({ ...config, command: 'deno' }),
      configHash({ ...config, args: ['--port', '1', 'server.js'] }),
      configHash({ ...config, env: { ...config.env, A_MODE: 'slow' } }),
      configHash({ ...config, timeout: 1001 }),
      configHash({ ...config, enabled: true }),
      configHash({ url: 'https://example.test/mcp' }),
      configHash({ url: 'https://example.test/mcp', headers: { Authorization: 'Bearer x' } }),
      configHash({}),
    ]);
    expect(hashes.size).toBe(9);
  });

  it('keeps a string value apart from the same text as a number', () => {
    expect(configHash({ timeout: 5 })).not.toBe(configHash({ timeout: '5' as unknown as number }));
  });
});
