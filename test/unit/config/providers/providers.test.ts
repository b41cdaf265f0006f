import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCodeProvider } from '../../../../src/config/providers/claude-code.js';
import { claudeDesktopProvider } from '../../../../src/config/providers/claude-desktop.js';
import { codexProvider } from '../../../../src/config/providers/codex.js';
import { cursorProvider } from '../../../../src/config/providers/cursor.js';
import { geminiProvider } from '../../../../src/config/providers/gemini.js';
import { nativeProvider } from '../../../../src/config/providers/native.js';
import { projectMcpJsonProvider } from '../../../../src/config/providers/project-mcp-json.js';
import type { ConfigProvider, ProviderContext } from '../../../../src/config/providers/provider.js';
import { vscodeProvider } from '../../../../src/config/providers/vscode.js';
import { windsurfProvider } from '../../../../src/config/providers/windsurf.js';
import { makeTree, type TempTree } from '../temp-tree.js';

function ctxOf(t: TempTree, extra: Partial<ProviderContext> = {}): ProviderContext {
  return { cwd: t.cwd, home: t.home, env: {}, platform: 'linux', ...extra };
}

/** `[name, level, path, config]` per item, the shape every provider test checks. */
async function readItems(provider: ConfigProvider, ctx: ProviderContext) {
  const result = await provider.read(ctx);
  return {
    items: result.items.map((i) => [i.name, i.source.level, i.source.path, i.config] as const),
    errors: Object.fromEntries(result.items.map((i) => [i.name, i.errors])),
    warnings: result.warnings.map((w) => w.message),
    sources: result.items.map((i) => i.source),
    settings: result.settings,
  };
}

describe('Claude Code provider', () => {
  it('reads ~/.claude.json top-level and projects[cwd], and .claude/mcp.json', async () => {
    const t = await makeTree();
    await t.write('home/.claude.json', {
      numStartups: 12,
      mcpServers: { github: { type: 'http', url: 'https://api.github.com/mcp' } },
      projects: {
        [`${t.cwd}/`]: { allowedTools: [], mcpServers: { local: { type: 'stdio', command: 'node', args: ['l.js'] } } },
        '/some/other/project': { mcpServers: { other: { command: 'nope' } } },
      },
    });
    await t.write('proj/.claude/mcp.json', { mcpServers: { shared: { command: 'npx', args: ['s'] } } });

    const r = await readItems(claudeCodeProvider, ctxOf(t));
    const claudeJson = join(t.home, '.claude.json');
    expect(r.items).toEqual([
      ['local', 'project', claudeJson, { type: 'stdio', command: 'node', args: ['l.js'] }],
      ['github', 'user', claudeJson, { type: 'http', url: 'https://api.github.com/mcp' }],
      ['shared', 'project', join(t.cwd, '.claude', 'mcp.json'), { command: 'npx', args: ['s'] }],
    ]);
    expect(r.sources[0]).toEqual({ provider: 'claude-code', providerName: 'Claude Code', path: claudeJson, level: 'project' });
    expect(r.warnings).toEqual([]);
  });
});

describe('Claude Desktop provider', () => {
  const entry = { mcpServers: { desk: { command: 'desk' } } };

  it.each([
    ['darwin', {}, 'home/Library/Application Support/Claude/claude_desktop_config.json'],
    ['win32', { APPDATA: 'APPDATA' }, 'APPDATA/Claude/claude_desktop_config.json'],
    ['linux', {}, 'home/.config/Claude/claude_desktop_config.json'],
    ['linux', { XDG_CONFIG_HOME: 'xdg' }, 'xdg/Claude/claude_desktop_config.json'],
  ] as const)('reads its %s location', async (platform, envRel, file) => {
    const t = await makeTree();
    const path = await t.write(file, entry);
    const env = Object.fromEntries(Object.entries(envRel).map(([k, v]) => [k, join(t.root, v)]));
    const r = await readItems(claudeDesktopProvider, ctxOf(t, { platform, env }));
    expect(r.items).toEqual([['desk', 'user', path, { command: 'desk' }]]);
  });
});

describe('Cursor provider', () => {
  it('reads the project file before the user file; disabled: true switches an entry off', async () => {
    const t = await makeTree({
      'proj/.cursor/mcp.json': { mcpServers: { p: { url: 'https://p.example/mcp', type: 'streamableHttp' } } },
      'home/.cursor/mcp.json': { mcpServers: { u: { command: 'u', disabled: true } } },
    });
    const r = await readItems(cursorProvider, ctxOf(t));
    expect(r.items).toEqual([
      ['p', 'project', join(t.cwd, '.cursor', 'mcp.json'), { type: 'http', url: 'https://p.example/mcp' }],
      ['u', 'user', join(t.home, '.cursor', 'mcp.json'), { command: 'u', enabled: false }],
    ]);
  });
});

describe('VS Code provider', () => {
  it('reads JSONC `servers` with comments and trailing commas, and ${workspaceFolder}', async () => {
    const t = await makeTree();
    const path = await t.write(
      'proj/.vscode/mcp.json',
      `{
  // Servers for this workspace
  "inputs": [{ "type": "promptString", "id": "key", "password": true }],
  "servers": {
    "fs": { "type": "stdio", "command": "npx", "args": ["-y", "fs", "\${workspaceFolder}"], },
    "remote": { "type": "sse", "url": "https://r.example/sse", "headers": { "X-Key": "\${input:key}" } },
  },
}`,
    );
    const r = await readItems(vscodeProvider, ctxOf(t));
    expect(r.items).toEqual([
      ['fs', 'project', path, { type: 'stdio', command: 'npx', args: ['-y', 'fs', t.cwd] }],
      ['remote', 'project', path, { type: 'sse', url: 'https://r.example/sse', headers: { 'X-Key': '${input:key}' } }],
    ]);
    expect(r.warnings).toEqual([]);
  });

  it('reads the user mcp.json from the OS settings directory', async () => {
    const t = await makeTree();
    const path = await t.write('home/.config/Code/User/mcp.json', { servers: { u: { type: 'http', url: 'https://u/mcp' } } });
    const r = await readItems(vscodeProvider, ctxOf(t));
    expect(r.items).toEqual([['u', 'user', path, { type: 'http', url: 'https://u/mcp' }]]);
  });
});

describe('Windsurf provider', () => {
  it('reads ~/.codeium/windsurf/mcp_config.json with serverUrl, and disabledTools as excludeTools', async () => {
    const t = await makeTree();
    const path = await t.write('home/.codeium/windsurf/mcp_config.json', {
      mcpServers: {
        remote: { serverUrl: 'https://w.example/mcp', headers: { A: 'b' } },
        local: { command: 'w', disabledTools: ['x'] },
      },
    });
    const r = await readItems(windsurfProvider, ctxOf(t));
    expect(r.items).toEqual([
      ['remote', 'user', path, { url: 'https://w.example/mcp', headers: { A: 'b' } }],
      ['local', 'user', path, { command: 'w', excludeTools: ['x'] }],
    ]);
    expect(r.warnings).toEqual([]);
  });
});

describe('Gemini CLI provider', () => {
  it('maps url to sse, httpUrl to http, timeout to callTimeout and keeps the tool filters', async () => {
    const t = await makeTree();
    const project = await t.write('proj/.gemini/settings.json', '{ // project\n "mcpServers": { "legacy": { "url": "https://g.example/sse", "trust": true, "timeout": 5000 } } }');
    const user = await t.write('home/.gemini/settings.json', {
      theme: 'Dracula',
      mcpServers: {
        modern: {
          httpUrl: 'https://g.example/mcp',
          headers: { Authorization: 'Bearer x' },
          includeTools: ['a', 'b'],
          excludeTools: ['b'],
        },
        local: { command: 'python', args: ['-m', 'srv'], cwd: './srv', env: { K: 'v' } },
      },
    });
    const r = await readItems(geminiProvider, ctxOf(t));
    expect(r.items).toEqual([
      ['legacy', 'project', project, { type: 'sse', url: 'https://g.example/sse', callTimeout: 5000 }],
      [
        'modern',
        'user',
        user,
        {
          type: 'http',
          url: 'https://g.example/mcp',
          headers: { Authorization: 'Bearer x' },
          includeTools: ['a', 'b'],
          excludeTools: ['b'],
        },
      ],
      ['local', 'user', user, { command: 'python', args: ['-m', 'srv'], cwd: './srv', env: { K: 'v' } }],
    ]);
    expect(r.warnings).toEqual([]);
  });
});

describe('OAuth blocks of other clients (issue #16)', () => {
  it('keeps Gemini oauth clientId, clientSecret and scopes, and what it cannot use goes quietly', async () => {
    const t = await makeTree();
    const user = await t.write('home/.gemini/settings.json', {
      mcpServers: {
        webex: {
          url: 'https://g.example/mcp',
          oauth: { enabled: true, clientId: 'cid', clientSecret: 'sec', authorizationUrl: 'https://a.example/auth', tokenUrl: 'https://a.example/token', scopes: ['spark:mcp'] },
        },
        bad: { httpUrl: 'https://g.example/bad', oauth: { clientId: 7, scopes: 'one' } },
      },
    });
    const r = await readItems(geminiProvider, ctxOf(t));
    expect(r.items).toEqual([
      ['webex', 'user', user, { type: 'sse', url: 'https://g.example/mcp', oauth: { clientId: 'cid', clientSecret: 'sec', scopes: ['spark:mcp'] } }],
      ['bad', 'user', user, { type: 'http', url: 'https://g.example/bad' }],
    ]);
    expect(r.errors.bad).toEqual(['"oauth" clientId must be a string', '"oauth" scopes must be an array of strings']);
    expect(r.warnings).toEqual([]);
  });

  it('keeps Codex scopes and [mcp_servers.<name>.oauth] client_id', async () => {
    const t = await makeTree();
    const path = await t.write(
      'home/.codex/config.toml',
      `[mcp_servers.linear]
url = "https://mcp.linear.example/mcp"
scopes = ["read", "write"]

[mcp_servers.linear.oauth]
client_id = "codex-client"
callback_url = "http://127.0.0.1/callback"
`,
    );
    const r = await readItems(codexProvider, ctxOf(t));
    expect(r.items).toEqual([['linear', 'user', path, { url: 'https://mcp.linear.example/mcp', oauth: { clientId: 'codex-client', scopes: ['read', 'write'] } }]]);
    expect(r.warnings).toEqual([]);
  });
});

describe('Codex provider', () => {
  it('reads [mcp_servers.<name>] from ~/.codex/config.toml', async () => {
    const t = await makeTree();
    const path = await t.write(
      'home/.codex/config.toml',
      `model = "o4"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]
startup_timeout_sec = 20
tool_timeout_sec = 90
env_vars = ["PROXY", "UNSET_ONE"]
enabled_tools = ["search", "fetch"]
disabled_tools = ["fetch"]

[mcp_servers.docs.env]
LEVEL = "debug"

[mcp_servers.remote]
url = "https://c.example/mcp"
bearer_token_env_var = "C_TOKEN"
enabled = false
http_headers = { "X-Team" = "core" }
env_http_headers = { "X-Key" = "C_KEY" }
`,
    );
    const env = { C_TOKEN: 'tok', C_KEY: 'key', PROXY: 'http://proxy' };
    const r = await readItems(codexProvider, ctxOf(t, { env }));
    expect(r.items).toEqual([
      [
        'docs',
        'user',
        path,
        {
          command: 'npx',
          args: ['-y', 'docs-mcp'],
          env: { LEVEL: 'debug', PROXY: 'http://proxy' },
          timeout: 20_000,
          callTimeout: 90_000,
          includeTools: ['search', 'fetch'],
          excludeTools: ['fetch'],
        },
      ],
      [
        'remote',
        'user',
        path,
        {
          url: 'https://c.example/mcp',
          headers: { 'X-Team': 'core', 'X-Key': 'key', Authorization: 'Bearer tok' },
          enabled: false,
        },
      ],
    ]);
  });

  it('honours $CODEX_HOME', async () => {
    const t = await makeTree();
    const path = await t.write('codexhome/config.toml', '[mcp_servers.x]\ncommand = "x"\n');
    const r = await readItems(codexProvider, ctxOf(t, { env: { CODEX_HOME: join(t.root, 'codexhome') } }));
    expect(r.items).toEqual([['x', 'user', path, { command: 'x' }]]);
  });
});

describe('project provider', () => {
  it('reads .mcp.json then mcp.json in the working directory', async () => {
    const t = await makeTree({
      'proj/.mcp.json': { mcpServers: { a: { command: 'a' } } },
      'proj/mcp.json': { mcpServers: { b: { type: 'sse', url: 'https://b/sse' } } },
    });
    const r = await readItems(projectMcpJsonProvider, ctxOf(t));
    expect(r.items).toEqual([
      ['a', 'project', join(t.cwd, '.mcp.json'), { command: 'a' }],
      ['b', 'project', join(t.cwd, 'mcp.json'), { type: 'sse', url: 'https://b/sse' }],
    ]);
  });

  it('warns about unknown keys and wrong field types, naming the file and server', async () => {
    const t = await makeTree({ 'proj/.mcp.json': { mcpServers: { a: { command: 'a', args: 'not-a-list', colour: 'red' } } } });
    const r = await readItems(projectMcpJsonProvider, ctxOf(t));
    expect(r.errors).toEqual({ a: ['"args" must be an array of strings'] });
    expect(r.warnings).toEqual([`${join(t.cwd, '.mcp.json')}: server "a": unknown key "colour" ignored`]);
  });
});

describe('native provider', () => {
  it('reads the --config file at level native, with its settings', async () => {
    const t = await makeTree();
    const path = await t.write('elsewhere/sb.json', {
      port: 9000,
      disabledServers: ['x'],
      enabledServers: ['y'],
      enableProjectConfig: false,
      mcpServers: { mine: { command: 'mine', env: { K: '${HOME_DIR:-/h}' } } },
    });
    const r = await readItems(nativeProvider, ctxOf(t, { configPath: path }));
    expect(r.items).toEqual([['mine', 'native', path, { command: 'mine', env: { K: '/h' } }]]);
    expect(r.sources[0]?.provider).toBe('switchboard');
    expect(r.settings).toEqual({ enableProjectConfig: false, disabledServers: ['x'], enabledServers: ['y'], policies: [] });
  });

  it("checks its policies' CEL at read, loading CEL for a file that has some (issue #44)", async () => {
    const t = await makeTree();
    const rule = { name: 'big', when: 'args.n > 10', effect: 'deny' };
    const good = await t.write('good.json', { policies: [rule] });
    expect((await nativeProvider.read(ctxOf(t, { configPath: good }))).settings?.policies).toEqual([{ ...rule, match: {}, mode: 'enforce' }]);
    const bad = await t.write('bad.json', { policies: [{ ...rule, when: 'arg.n > 10' }] });
    expect((await readItems(nativeProvider, ctxOf(t, { configPath: bad }))).warnings).toEqual([
      `${bad}: policies.0.when: policy "big": CEL does not compile at 1:1: Unknown variable: arg (file ignored)`,
    ]);
  });

  it('falls back to $SWITCHBOARD_CONFIG, then ~/.config/switchboard/config.json', async () => {
    const t = await makeTree();
    const byEnv = await t.write('env.json', { mcpServers: { e: { command: 'e' } } });
    const byDefault = await t.write('home/.config/switchboard/config.json', { mcpServers: { d: { command: 'd' } } });
    expect((await readItems(nativeProvider, ctxOf(t, { env: { SWITCHBOARD_CONFIG: byEnv } }))).items).toEqual([['e', 'native', byEnv, { command: 'e' }]]);
    expect((await readItems(nativeProvider, ctxOf(t))).items).toEqual([['d', 'native', byDefault, { command: 'd' }]]);
  });

  it('marks a bad entry invalid with its field path and keeps the others', async () => {
    const t = await makeTree();
    const path = await t.write('home/.config/switchboard/config.json', {
      mcpServers: { bad: { type: 'http', url: 'not a url', colour: 1 }, good: { command: 'g' } },
    });
    const r = await readItems(nativeProvider, ctxOf(t));
    expect(r.items.map(([name]) => name)).toEqual(['bad', 'good']);
    expect(r.errors).toEqual({ bad: ['url: Invalid url', 'colour: unknown key'], good: [] });
    expect(r.warnings).toEqual([]);
    expect(path).toBe(join(t.home, '.config', 'switchboard', 'config.json'));
  });

  it('ignores the whole file, with warnings, when a setting is invalid', async () => {
    const t = await makeTree();
    const path = await t.write('home/.config/switchboard/config.json', {
      listen: ':80',
      disabledServers: 'x',
      mcpServers: { a: { command: 'a' } },
    });
    const r = await readItems(nativeProvider, ctxOf(t));
    expect(r.items).toEqual([]);
    expect(r.settings).toBeUndefined();
    expect(r.warnings).toContain(`${path}: listen: no longer supported, use host and port instead (file ignored)`);
    expect(r.warnings.some((w) => w.startsWith(`${path}: disabledServers: `))).toBe(true);
  });
});
