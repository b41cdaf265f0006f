import { describe, expect, it } from 'vitest';
import { loadDaemonConfig } from '../../../src/config/load.js';
import { DaemonConfigSchema } from '../../../src/config/schema.js';
import { isSwitchboardError } from '../../../src/errors.js';
import { makeTree } from './temp-tree.js';

/** The `agentAuth.jwt` block (issue #40 item 4): checked at the edge, each problem naming its field. */
describe('agentAuth config', () => {
  const base = { issuer: 'https://login.example.com/', audiences: ['switchboard'], jwksUrl: 'https://login.example.com/jwks.json' };
  const issues = (jwt: unknown): string[] | undefined => DaemonConfigSchema.safeParse({ agentAuth: { jwt } }).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`);

  it('accepts the block with its defaults, and leaves it out by default', () => {
    expect(DaemonConfigSchema.parse({}).agentAuth).toBeUndefined();
    expect(DaemonConfigSchema.parse({ agentAuth: { jwt: base } }).agentAuth?.jwt).toEqual({ ...base, agent: 'sub', clockToleranceSeconds: 30 });
    expect(issues({ ...base, jwksUrl: 'http://127.0.0.1:8080/jwks.json' })).toBeUndefined();
    expect(
      issues({ ...base, jwksUrl: undefined, jwksFile: '/etc/switchboard/jwks.json', view: { servers: 'sb_servers', access: 'tier' }, access: 'read', algorithms: ['ES256'] }),
    ).toBeUndefined();
  });

  it('refuses plain http to another host, both or neither key source, HMAC algorithms and unknown keys', () => {
    expect(issues({ ...base, jwksUrl: 'http://login.example.com/jwks.json' })).toEqual([
      'agentAuth.jwt.jwksUrl: jwksUrl must be https (plain http only to 127.0.0.1, localhost or [::1])',
    ]);
    expect(issues({ ...base, jwksFile: '/etc/jwks.json' })).toEqual(['agentAuth.jwt: give exactly one of jwksUrl and jwksFile']);
    expect(issues({ ...base, jwksUrl: undefined })).toEqual(['agentAuth.jwt: give exactly one of jwksUrl and jwksFile']);
    expect(issues({ ...base, algorithms: ['HS256'] })?.[0]).toMatch(/^agentAuth\.jwt\.algorithms\.0: algorithms are among RS256/);
    expect(issues({ ...base, audiences: [] })).toEqual(['agentAuth.jwt.audiences: audiences must name at least one audience']);
    expect(issues({ ...base, view: { role: 'x' } })?.[0]).toMatch(/^agentAuth\.jwt\.view: Unrecognized key: "role"/);
  });

  it('fails the load with CONFIG_INVALID naming the field', async () => {
    const t = await makeTree();
    const path = await t.write('sb.json', { agentAuth: { jwt: { ...base, jwksUrl: 'http://idp.example.com/jwks' } } });
    const err = await loadDaemonConfig({ path, env: {}, home: t.home }).catch((e: unknown) => e);
    expect(isSwitchboardError(err, 'CONFIG_INVALID')).toBe(true);
    expect((err as Error).message).toContain('agentAuth.jwt.jwksUrl');
  });
});
