import { describe, expect, it } from 'vitest';
import { globMatcher, globProblem } from '../../../src/config/agent-schema.js';
import { parseDaemonConfig } from '../../../src/config/load.js';

/** Issue #22: the config's `agents` table, entry by entry. */

const ctx = { path: '/etc/sb.json', env: { CI_KEY: 'key-from-the-environment-0123' }, home: '/home/me' };

describe('config agents', () => {
  it('keeps the valid entries and leaves out each invalid one with a message naming its path; the rest applies', () => {
    const config = parseDaemonConfig(
      {
        port: 8080,
        mcpServers: { echo: { command: 'echo' } },
        agents: {
          ci: { servers: ['github', 'git*'], tools: ['mcp_github_*'], exclude: ['*_delete_*'], access: 'read', key: '${CI_KEY}', expiresAt: '2030-01-31' },
          ops: { access: 'all', rateLimit: { perMinute: 60, burst: 10 }, maxConcurrentCalls: 4, requireApproval: ['*_deploy'], catalogue: 'search' },
          glob: { tools: ['mcp_[a-'] },
          access: { access: 'rw' },
          unset: { key: '${NOT_SET}' },
          typo: { server: ['x'] },
          'bad name!': {},
          late: { expiresAt: 'next week' },
        },
      },
      ctx,
    );
    expect(config.port).toBe(8080);
    expect(Object.keys(config.mcpServers)).toEqual(['echo']);
    expect(Object.keys(config.agents)).toEqual(['ci', 'ops']);
    expect(config.agents.ci).toMatchObject({ access: 'read', key: 'key-from-the-environment-0123', exclude: ['*_delete_*'] });
    expect(config.warnings).toEqual([
      expect.stringContaining('agent "glob" ignored: agents.glob.tools.0: malformed glob "mcp_[a-"'),
      expect.stringContaining('agent "access" ignored: agents.access.access: access must be "read", "write" or "all"'),
      expect.stringContaining('agent "unset" ignored: agents.unset.key: unresolved placeholder'),
      expect.stringContaining('agent "typo" ignored: agents.typo.server: unknown key'),
      expect.stringContaining('agent "bad name!" ignored: agents.bad name!: an agent name is 1-64 letters'),
      expect.stringContaining('agent "late" ignored: agents.late.expiresAt: expected an ISO date'),
    ]);
    for (const warning of config.warnings) expect(warning.startsWith('/etc/sb.json: ')).toBe(true);
  });

  it('matches names with picomatch globs, and tells a malformed glob', () => {
    expect(globProblem('mcp_*')).toBeUndefined();
    expect(globProblem('{a,b')).toMatch(/^malformed glob "\{a,b"/);
    const match = globMatcher(['git*', 'echo']);
    expect(['github', 'echo', 'echo2', 'gitlab.self'].filter(match)).toEqual(['github', 'echo', 'gitlab.self']);
    expect(globMatcher(undefined)('anything')).toBe(true);
  });
});
