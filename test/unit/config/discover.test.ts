import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverMCPServers } from '../../../src/config/discover.js';
import { DEFAULT_PROVIDERS } from '../../../src/config/providers/index.js';
import type { ConfigProvider } from '../../../src/config/providers/provider.js';
import type { DiscoveryOptions, ServerOutcome } from '../../../src/config/types.js';
import { makeTree, type TempTree } from './temp-tree.js';

function optionsOf(t: TempTree, extra: Partial<DiscoveryOptions> = {}): DiscoveryOptions {
  return { cwd: t.cwd, home: t.home, env: {}, platform: 'linux', ...extra };
}

/** `name status provider level` per outcome: enough to see precedence at a glance. */
function summary(outcomes: ServerOutcome[]): string[] {
  return outcomes.map((o) => {
    const why =
      o.status === 'shadowed'
        ? ` by ${o.shadowedBy.name}@${o.shadowedBy.source.provider} (${o.reason})`
        : o.status === 'disabled' || o.status === 'filtered'
          ? ` (${o.reason})`
          : '';
    return `${o.name} ${o.status}${why} ${o.source.provider}/${o.source.level}`;
  });
}

describe('discoverMCPServers precedence', () => {
  it('orders providers by priority, project before user, and the first wins the name', async () => {
    const dup = (id: string) => ({ dup: { command: `cmd-${id}` } });
    const t = await makeTree({
      'home/.config/switchboard/config.json': { mcpServers: dup('native') },
      'proj/.mcp.json': { mcpServers: dup('project') },
      'home/.claude.json': { mcpServers: dup('cc-user') },
      'proj/.claude/mcp.json': { mcpServers: dup('cc-project') },
      'home/.config/Claude/claude_desktop_config.json': { mcpServers: dup('desktop') },
      'home/.cursor/mcp.json': { mcpServers: dup('cursor') },
      'proj/.vscode/mcp.json': { servers: dup('vscode') },
      'home/.codeium/windsurf/mcp_config.json': { mcpServers: dup('windsurf') },
      'home/.gemini/settings.json': { mcpServers: dup('gemini') },
      'home/.codex/config.toml': '[mcp_servers.dup]\ncommand = "cmd-codex"\n',
    });
    const report = await discoverMCPServers(optionsOf(t));
    expect(summary(report.outcomes)).toEqual([
      'dup active switchboard/native',
      'dup shadowed by dup@switchboard (name) project/project',
      'dup shadowed by dup@switchboard (name) claude-code/project',
      'dup shadowed by dup@switchboard (name) claude-code/user',
      'dup shadowed by dup@switchboard (name) claude-desktop/user',
      'dup shadowed by dup@switchboard (name) cursor/user',
      'dup shadowed by dup@switchboard (name) vscode/project',
      'dup shadowed by dup@switchboard (name) windsurf/user',
      'dup shadowed by dup@switchboard (name) gemini/user',
      'dup shadowed by dup@switchboard (name) codex/user',
    ]);
    expect(report.configs).toEqual({ dup: { command: 'cmd-native' } });
    expect(report.sources.dup).toEqual({
      provider: 'switchboard',
      providerName: 'Switchboard',
      path: join(t.home, '.config', 'switchboard', 'config.json'),
      level: 'native',
    });
    expect(report.shadowed).toHaveLength(9);
    expect(report.warnings).toEqual([]);
  });

  it('puts project-level entries before user-level ones within a provider, whatever order it reads them in', async () => {
    const t = await makeTree();
    const source = (level: 'user' | 'project') => ({ provider: 'p', providerName: 'P', path: `/${level}.json`, level });
    const provider: ConfigProvider = {
      id: 'p',
      displayName: 'P',
      priority: 1,
      read: async () => ({
        items: [
          { name: 'x', config: { command: 'user' }, source: source('user'), errors: [] },
          { name: 'x', config: { command: 'project' }, source: source('project'), errors: [] },
        ],
        warnings: [],
      }),
    };
    const report = await discoverMCPServers(optionsOf(t), [provider]);
    expect(report.configs.x).toEqual({ command: 'project' });
    expect(summary(report.outcomes)).toEqual(['x active p/project', 'x shadowed by x@p (name) p/user']);
  });

  it('shadows a different name for the same connection (stdio and http)', async () => {
    const t = await makeTree({
      'home/.claude.json': {
        mcpServers: {
          fs: { command: 'npx', args: ['-y', 'fs'], env: { A: '1', B: '2' } },
          gh: { type: 'http', url: 'https://gh/mcp', headers: { Authorization: 'x' } },
        },
      },
      'home/.cursor/mcp.json': {
        mcpServers: {
          filesystem: { command: 'npx', args: ['-y', 'fs'], env: { B: '2', A: '1' } },
          github: { url: 'https://gh/mcp', headers: { Authorization: 'x' } },
          'gh-other-token': { url: 'https://gh/mcp', headers: { Authorization: 'y' } },
          'fs-other-cwd': { command: 'npx', args: ['-y', 'fs'], env: { A: '1', B: '2' }, cwd: '/tmp' },
        },
      },
    });
    const report = await discoverMCPServers(optionsOf(t));
    expect(summary(report.outcomes)).toEqual([
      'fs active claude-code/user',
      'gh active claude-code/user',
      'filesystem shadowed by fs@claude-code (same-connection) cursor/user',
      'github shadowed by gh@claude-code (same-connection) cursor/user',
      'gh-other-token active cursor/user',
      'fs-other-cwd active cursor/user',
    ]);
    expect(report.shadowed.map((s) => [s.name, s.reason, s.shadowedBy.name])).toEqual([
      ['filesystem', 'same-connection', 'fs'],
      ['github', 'same-connection', 'gh'],
    ]);
  });

  it('never lets an invalid entry shadow a valid one', async () => {
    const t = await makeTree({
      'proj/.mcp.json': { mcpServers: { gh: { type: 'ws', url: 'https://gh/mcp' } } },
      'home/.claude.json': { mcpServers: { gh: { type: 'http', url: 'https://gh/mcp' } } },
    });
    const report = await discoverMCPServers(optionsOf(t));
    expect(report.configs.gh).toEqual({ type: 'http', url: 'https://gh/mcp' });
    const invalid = report.outcomes[0];
    expect(invalid).toMatchObject({ name: 'gh', status: 'invalid', errors: ['unknown type "ws" (expected stdio, http or sse)'] });
    expect(report.warnings.map((w) => w.message)).toEqual([`${join(t.cwd, '.mcp.json')}: server "gh" is invalid: unknown type "ws" (expected stdio, http or sse)`]);
  });
});

describe('discoverMCPServers filters', () => {
  it('enableProjectConfig: false drops project entries before dedup', async () => {
    const files = {
      'proj/.mcp.json': { mcpServers: { p: { command: 'same', args: ['x'] } } },
      'home/.claude.json': { mcpServers: { u: { command: 'same', args: ['x'] } } },
    };
    const on = await discoverMCPServers(optionsOf(await makeTree(files)));
    expect(summary(on.outcomes)).toEqual(['p active project/project', 'u shadowed by p@project (same-connection) claude-code/user']);

    const off = await discoverMCPServers(optionsOf(await makeTree(files), { enableProjectConfig: false }));
    expect(summary(off.outcomes)).toEqual(['p disabled (project-config-disabled) project/project', 'u active claude-code/user']);
    expect(Object.keys(off.configs)).toEqual(['u']);
  });

  it('takes enableProjectConfig from the native file unless the option overrides it', async () => {
    const files = {
      'home/.config/switchboard/config.json': { enableProjectConfig: false },
      'proj/.mcp.json': { mcpServers: { p: { command: 'p' } } },
    };
    const fromFile = await discoverMCPServers(optionsOf(await makeTree(files)));
    expect(summary(fromFile.outcomes)).toEqual(['p disabled (project-config-disabled) project/project']);
    const overridden = await discoverMCPServers(optionsOf(await makeTree(files), { enableProjectConfig: true }));
    expect(summary(overridden.outcomes)).toEqual(['p active project/project']);
  });

  it('skips enabled: false in every form, and lets disabledServers / enabledServers decide', async () => {
    const t = await makeTree({
      'home/.config/switchboard/config.json': { disabledServers: ['deny', 'both'], enabledServers: ['allow', 'both'] },
      'home/.claude.json': {
        mcpServers: {
          off: { command: 'a', enabled: false },
          offString: { command: 'b', enabled: 'false' },
          offZero: { command: 'c', enabled: '0' },
          onString: { command: 'd', enabled: 'true' },
          onOne: { command: 'e', enabled: '1' },
          allow: { command: 'f', enabled: false },
          deny: { command: 'g', enabled: true },
          both: { command: 'h' },
          weird: { command: 'i', enabled: 'yes' },
        },
      },
    });
    const report = await discoverMCPServers(optionsOf(t));
    expect(summary(report.outcomes)).toEqual([
      'off disabled (enabled-false) claude-code/user',
      'offString disabled (enabled-false) claude-code/user',
      'offZero disabled (enabled-false) claude-code/user',
      'onString active claude-code/user',
      'onOne active claude-code/user',
      'allow active claude-code/user',
      'deny disabled (disabled-servers) claude-code/user',
      'both disabled (disabled-servers) claude-code/user',
      'weird invalid claude-code/user',
    ]);
    expect(report.outcomes.at(-1)).toMatchObject({ errors: ['"enabled" must be a boolean or "true", "false", "1", "0"'] });
  });

  it('filters Exa servers, extracts their keys, and keeps one that asks for more tools', async () => {
    const t = await makeTree({
      'home/.claude.json': {
        mcpServers: {
          exa: { command: 'npx', args: ['-y', 'exa-mcp-server'], env: { EXA_API_KEY: 'key-env' } },
          'exa-remote': { url: 'https://mcp.exa.ai/mcp?exaApiKey=key-url&tools=web_search_exa' },
          'exa-bridge': { command: 'npx', args: ['mcp-remote', 'https://mcp.exa.ai/mcp?exaApiKey=key-arg'] },
          'exa-full': { url: 'https://mcp.exa.ai/mcp?exaApiKey=key-kept&tools=web_search_exa,crawling_exa' },
        },
      },
    });
    const report = await discoverMCPServers(optionsOf(t));
    expect(summary(report.outcomes)).toEqual([
      'exa filtered (exa) claude-code/user',
      'exa-remote filtered (exa) claude-code/user',
      'exa-bridge filtered (exa) claude-code/user',
      'exa-full active claude-code/user',
    ]);
    expect(report.exaApiKeys).toEqual(['key-env', 'key-url', 'key-arg']);
    expect(JSON.stringify(report.warnings)).not.toContain('key-');
  });

  it('expands ${VAR} and ${VAR:-default}, and reports an entry with an unset variable as invalid', async () => {
    const t = await makeTree({
      'home/.claude.json': {
        mcpServers: {
          s: {
            command: '${TOOLS}/srv',
            args: ['--port', '${PORT:-8080}'],
            env: { TOKEN: '${MISSING_TOKEN}' },
          },
          h: { type: 'http', url: 'https://${API_HOST}/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
        },
      },
    });
    const env = { TOOLS: '/opt/tools', API_HOST: 'api.example', TOKEN: 't0k' };
    const report = await discoverMCPServers(optionsOf(t, { env }));
    expect(report.configs).toEqual({
      h: { type: 'http', url: 'https://api.example/mcp', headers: { Authorization: 'Bearer t0k' } },
    });
    const s = report.outcomes.find((o) => o.name === 's');
    expect(s).toMatchObject({ status: 'invalid', errors: ['unresolved placeholder ${MISSING_TOKEN} (variable not set) in env.TOKEN'] });
    expect(report.invalid).toEqual([{ name: 's', path: join(t.home, '.claude.json') }]);
  });
});

describe('discoverMCPServers robustness', () => {
  it('reports a broken JSON file with line and column while the other files still load', async () => {
    const t = await makeTree({
      'home/.cursor/mcp.json': '{\n  "mcpServers": {\n    "broken": { "command": "x", }\n  }\n}\n',
      'home/.claude.json': { mcpServers: { fine: { command: 'fine' } } },
    });
    const report = await discoverMCPServers(optionsOf(t));
    expect(Object.keys(report.configs)).toEqual(['fine']);
    const path = join(t.home, '.cursor', 'mcp.json');
    expect(report.warnings).toEqual([expect.objectContaining({ path, line: 3, column: 33, provider: 'cursor', message: `${path}:3:33: invalid JSON: property name expected` })]);
  });

  it('reports bad TOML with line and column while the other files still load', async () => {
    const t = await makeTree({
      'home/.codex/config.toml': '[mcp_servers.ok]\ncommand = "ok"\n\n[mcp_servers.broken\ncommand = "b"\n',
      'home/.gemini/settings.json': { mcpServers: { g: { command: 'g' } } },
    });
    const report = await discoverMCPServers(optionsOf(t));
    expect(Object.keys(report.configs)).toEqual(['g']);
    const path = join(t.home, '.codex', 'config.toml');
    expect(report.warnings).toHaveLength(1);
    expect(report.warnings[0]).toMatchObject({ path, line: 4, provider: 'codex' });
    expect(report.warnings[0]?.message).toMatch(new RegExp(`^${path}:4:\\d+: invalid TOML: `));
  });

  it('turns a provider that throws into a warning and keeps the others', async () => {
    const t = await makeTree({ 'home/.claude.json': { mcpServers: { fine: { command: 'fine' } } } });
    const broken: ConfigProvider = {
      id: 'broken',
      displayName: 'Broken',
      priority: 1000,
      read: () => {
        throw new Error('boom');
      },
    };
    const report = await discoverMCPServers(optionsOf(t), [broken, ...DEFAULT_PROVIDERS]);
    expect(Object.keys(report.configs)).toEqual(['fine']);
    expect(report.warnings).toEqual([{ message: 'Broken: provider failed: boom', provider: 'broken' }]);
  });

  it('reports a file whose top level is not an object, and an unreadable path', async () => {
    const t = await makeTree({ 'home/.cursor/mcp.json': '[1, 2]', 'home/.claude.json/oops': 'x' });
    const report = await discoverMCPServers(optionsOf(t));
    expect(report.warnings.map((w) => w.message)).toEqual([
      `${join(t.home, '.claude.json')}: cannot read file (EISDIR)`,
      `${join(t.home, '.cursor', 'mcp.json')}: expected an object at the top level; ignored`,
    ]);
  });
});
