import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CliContext } from '../../../src/cli/context.js';
import { runDiscover } from '../../../src/cli/discover.js';
import { runCli } from '../../../src/cli/dispatch.js';
import { makeTree, type TempTree } from '../config/temp-tree.js';

/** Runs a command in-process against the temp tree and captures what it prints. */
async function run(t: TempTree, argv: string[], main = runDiscover, env: NodeJS.ProcessEnv = {}) {
  let stdout = '';
  let stderr = '';
  const ctx: CliContext = {
    argv,
    env,
    home: t.home,
    cwd: t.cwd,
    platform: 'linux',
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
  };
  const code = await main(ctx);
  return { code, stdout, stderr };
}

const SECRETS = ['ghp_SECRET_TOKEN', 'sk-ENV-SECRET', 'exa-KEY-1234', 'TOKEN-IN-ARG'];

/** A config tree touching every outcome, with secrets in env, headers, url and args. */
async function wholeTree(): Promise<TempTree> {
  return makeTree({
    'home/.config/switchboard/config.json': {
      disabledServers: ['legacy'],
      mcpServers: { notes: { command: 'notes-mcp', env: { NOTES_KEY: 'sk-ENV-SECRET' } } },
    },
    'proj/.mcp.json': {
      mcpServers: {
        github: { type: 'http', url: 'https://api.github.com/mcp', headers: { Authorization: 'Bearer ghp_SECRET_TOKEN' } },
      },
    },
    'home/.claude.json': {
      mcpServers: {
        github: { type: 'http', url: 'https://other.example/mcp' },
        legacy: { command: 'legacy' },
        exa: { url: 'https://mcp.exa.ai/mcp?exaApiKey=exa-KEY-1234' },
        broken: { type: 'carrier-pigeon' },
        remote: { command: 'npx', args: ['mcp-remote', 'https://r.example/mcp', '--token', 'TOKEN-IN-ARG'] },
        // The README's agent entry: the daemon (default port 7337) would aggregate itself.
        switchboard: { type: 'http', url: 'http://127.0.0.1:7337/mcp' },
        // Another Switchboard on another port is a legitimate upstream.
        peer: { type: 'http', url: 'http://localhost:7338/mcp' },
      },
    },
    'home/.cursor/mcp.json': { mcpServers: { notes2: { command: 'notes-mcp', env: { NOTES_KEY: 'sk-ENV-SECRET' } } } },
    'home/.gemini/settings.json': '{ "mcpServers": { ',
  });
}

describe('switchboard discover', () => {
  it('--json lists every entry with transport, source and outcome, then the warnings', async () => {
    const t = await wholeTree();
    const { code, stdout, stderr } = await run(t, ['--json']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out.cwd).toBe(t.cwd);
    expect(out.configPath).toBe(join(t.home, '.config', 'switchboard', 'config.json'));
    expect(out.counts).toEqual({ active: 4, shadowed: 2, skipped: 1, disabled: 1, filtered: 1, invalid: 1 });
    expect(out.servers.map((s: Record<string, unknown>) => [s.name, s.status, s.transport, (s.source as { provider: string }).provider, s.outcome])).toEqual([
      ['notes', 'active', 'stdio', 'switchboard', 'active'],
      ['github', 'active', 'http', 'project', 'active'],
      ['github', 'shadowed', 'http', 'claude-code', 'shadowed by github (Project, project): same name'],
      ['legacy', 'disabled', 'stdio', 'claude-code', 'disabled (listed in disabledServers)'],
      ['exa', 'filtered', 'http', 'claude-code', 'filtered (Exa; API key kept)'],
      ['broken', 'invalid', null, 'claude-code', 'invalid: unknown type "carrier-pigeon" (expected stdio, http or sse)'],
      ['remote', 'active', 'stdio', 'claude-code', 'active'],
      ['switchboard', 'skipped', 'http', 'claude-code', 'skipped: points at this Switchboard itself'],
      ['peer', 'active', 'http', 'claude-code', 'active'],
      ['notes2', 'shadowed', 'stdio', 'cursor', 'shadowed by notes (Switchboard, native): same connection'],
    ]);
    expect(out.servers[2]).toMatchObject({
      reason: 'name',
      shadowedBy: { name: 'github', source: { provider: 'project', level: 'project', path: join(t.cwd, '.mcp.json') } },
    });
    expect(out.servers[5].errors).toEqual(['unknown type "carrier-pigeon" (expected stdio, http or sse)']);
    expect(out.servers[0].source).toEqual({
      provider: 'switchboard',
      providerName: 'Switchboard',
      path: join(t.home, '.config', 'switchboard', 'config.json'),
      level: 'native',
    });
    expect(out.exaApiKeyCount).toBe(1);
    expect(out.warnings.map((w: { message: string }) => w.message)).toEqual([
      expect.stringMatching(new RegExp(`^${join(t.home, '.gemini', 'settings.json')}:1:\\d+: invalid JSONC: `)),
      `${join(t.home, '.claude.json')}: server "broken" is invalid: unknown type "carrier-pigeon" (expected stdio, http or sse)`,
    ]);
  });

  it('masks env and header values and secrets in urls and args, in JSON and in the table', async () => {
    const t = await wholeTree();
    const json = await run(t, ['--json']);
    const table = await run(t, []);
    for (const output of [json.stdout, table.stdout]) {
      for (const secret of SECRETS) expect(output).not.toContain(secret);
    }
    const servers = JSON.parse(json.stdout).servers;
    expect(servers[0].config.env).toEqual({ NOTES_KEY: '****' });
    expect(servers[1].config.headers).toEqual({ Authorization: '****' });
    expect(servers[4].config.url).toBe('https://mcp.exa.ai/mcp?exaApiKey=****');
    expect(servers[6].config.args).toEqual(['mcp-remote', 'https://r.example/mcp', '--token', '****']);
    expect(table.stdout).toContain('Exa API keys found: 1 (not shown)');
  });

  it('prints a table row per entry, the counts and the warnings', async () => {
    const t = await wholeTree();
    const { code, stdout } = await run(t, []);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines).toContainEqual(expect.stringMatching(/^NAME\s+TRANSPORT\s+SOURCE\s+PATH\s+OUTCOME$/));
    expect(lines).toContainEqual(expect.stringMatching(/^github\s+http\s+Claude Code \(user\)\s+\S+\.claude\.json\s+shadowed by github \(Project, project\): same name$/));
    expect(lines).toContain('4 active, 2 shadowed, 1 skipped, 1 disabled, 1 filtered, 1 invalid');
    expect(lines).toContainEqual(expect.stringMatching(/^switchboard\s+http\s+Claude Code \(user\).*skipped: points at this Switchboard itself$/));
    expect(lines).toContain('Warnings (2):');
  });

  it('--no-project-config disables project-level entries', async () => {
    const t = await wholeTree();
    const out = JSON.parse((await run(t, ['--json', '--no-project-config'])).stdout);
    const github = out.servers.filter((s: { name: string }) => s.name === 'github');
    expect(github.map((s: { status: string; reason?: string }) => [s.status, s.reason])).toEqual([
      ['disabled', 'project-config-disabled'],
      ['active', undefined],
    ]);
  });

  it('--cwd points discovery at another project, relative to the working directory', async () => {
    const t = await makeTree({ 'other/.mcp.json': { mcpServers: { elsewhere: { command: 'x' } } } });
    const out = JSON.parse((await run(t, ['--json', '--cwd', '../other'])).stdout);
    expect(out.cwd).toBe(join(t.root, 'other'));
    expect(out.servers.map((s: { name: string }) => s.name)).toEqual(['elsewhere']);
  });

  it('prints the table with a bad entry of its own file marked, and exits 0: serve would skip it too (issue #36 item 2)', async () => {
    const t = await makeTree({ 'proj/.mcp.json': { mcpServers: { other: { command: 'other' } } } });
    const own = await t.write('own.json', { mcpServers: { github: { url: 'nope' }, typo: { comand: 'node' }, good: { command: 'good' } } });
    const table = await run(t, ['--config', own]);
    expect(table.code).toBe(0);
    expect(table.stderr).toBe('');
    const lines = table.stdout.split('\n');
    expect(lines).toContainEqual(expect.stringMatching(/^github\s+http\s+Switchboard \(native\)\s+\S+own\.json\s+invalid: url: Invalid url; "url" must be an http\(s\) URL$/));
    expect(lines).toContainEqual(expect.stringMatching(/^typo\s+stdio\s+Switchboard \(native\).*invalid: comand: unknown key; stdio server needs a "command"$/));
    expect(lines).toContainEqual(expect.stringMatching(/^good\s+stdio\s+Switchboard \(native\).*active$/));
    expect(lines).toContainEqual(expect.stringMatching(/^other\s+stdio\s+Project \(project\).*active$/));
    expect(lines).toContain('2 active, 0 shadowed, 0 skipped, 0 disabled, 0 filtered, 2 invalid');
  });

  it('still prints the table when its own file is invalid or unreadable, then exits 2 with one line on stderr', async () => {
    const t = await makeTree({ 'proj/.mcp.json': { mcpServers: { other: { command: 'other' } } } });
    const bad = await t.write('bad.json', { port: 'eighty', mcpServers: { mine: { command: 'mine' } } });
    const invalid = await run(t, ['--config', bad]);
    expect(invalid.code).toBe(2);
    expect(invalid.stdout).toContain('other');
    expect(invalid.stdout).toMatch(/port: .*\(file ignored\)/);
    expect(invalid.stderr).toMatch(new RegExp(`^switchboard: ${bad}: port: [^\\n]*\\(serve would refuse to start\\)\\n$`));

    const missing = await run(t, ['--config', 'missing.json']);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toContain('other');
    expect(missing.stderr).toBe(`switchboard: ${join(t.cwd, 'missing.json')}: config file not found (serve would refuse to start)\n`);

    const broken = await t.write('broken.json', '{\n"port": \n}');
    const unparsable = await run(t, ['--config', broken]);
    expect(unparsable.code).toBe(2);
    expect(unparsable.stdout).toContain(`${broken}:3:1: invalid JSONC: value expected`);
    expect(unparsable.stderr).toMatch(new RegExp(`^switchboard: ${broken}:3:1: invalid JSONC: value expected \\(serve would refuse to start\\)\\n$`));
  });

  it('exits 0 with warnings when only other tools’ files are broken', async () => {
    const t = await makeTree({ 'home/.cursor/mcp.json': '{' });
    const { code, stdout } = await run(t, []);
    expect(code).toBe(0);
    expect(stdout).toContain('Warnings (1):');
    expect(stdout).toContain('No MCP servers found.');
  });

  it('exits 2 with the usage on an unknown flag, and prints help with --help', async () => {
    const t = await makeTree();
    const bad = await run(t, ['--frobnicate']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('usage: switchboard discover');
    const help = await run(t, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--no-project-config');
  });
});

describe('switchboard dispatch', () => {
  it('runs the named command with the remaining arguments', async () => {
    const t = await makeTree({ 'proj/.mcp.json': { mcpServers: { a: { command: 'a' } } } });
    const { code, stdout } = await run(t, ['discover', '--json'], runCli);
    expect(code).toBe(0);
    expect(JSON.parse(stdout).servers[0].name).toBe('a');
  });

  it('prints the usage and exits 2 for an unknown or missing command', async () => {
    const t = await makeTree();
    const unknown = await run(t, ['frobnicate'], runCli);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^switchboard: unknown command "frobnicate" \(commands: discover, serve, .*\)\n$/);
    const none = await run(t, [], runCli);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('usage: switchboard <command>');
  });

  it('prints the usage on stdout and exits 0 for --help', async () => {
    const t = await makeTree();
    const help = await run(t, ['--help'], runCli);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toContain('discover');
  });
});
