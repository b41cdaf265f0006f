import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli, type CliRun } from '../helpers/cli-run.js';
import { describe, expect, it, onTestFinished } from 'vitest';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Runs the real entry point as a child process. The environment is built from scratch so the
 * child can only see the temporary HOME, never the real one (no XDG_*, APPDATA, CODEX_HOME).
 */
function cli(args: string[], home: string): Promise<CliRun> {
  return runCli(args, { cwd: repo, env: { PATH: process.env.PATH, HOME: home } });
}

async function tree(files: Record<string, unknown>) {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'switchboard-cli-')));
  onTestFinished(() => rm(root, { recursive: true, force: true }));
  for (const [rel, content] of Object.entries(files)) {
    const path = join(root, rel);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  }
  return root;
}

describe('switchboard discover (real process)', () => {
  it('discovers a config tree under a temporary HOME and prints JSON', async () => {
    const root = await tree({
      'home/.claude.json': { mcpServers: { github: { type: 'http', url: 'https://gh/mcp', headers: { Authorization: 'Bearer ghp_REAL' } } } },
      'home/.codex/config.toml': '[mcp_servers.docs]\ncommand = "docs-mcp"\n',
      'proj/.mcp.json': { mcpServers: { local: { command: 'node', args: ['server.js'] } } },
    });
    const { code, stdout, stderr } = await cli(['discover', '--json', '--cwd', join(root, 'proj')], join(root, 'home'));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out.servers.map((s: { name: string; status: string; source: { provider: string } }) => [s.name, s.status, s.source.provider])).toEqual([
      ['local', 'active', 'project'],
      ['github', 'active', 'claude-code'],
      ['docs', 'active', 'codex'],
    ]);
    expect(out.configPath).toBe(join(root, 'home', '.config', 'switchboard', 'config.json'));
    expect(stdout).not.toContain('ghp_REAL');
  });

  it('prints its table, then exits 2 with a one-line error for a bad --config; 2 for an unknown command', async () => {
    const root = await tree({ 'bad.json': { port: 'eighty' } });
    const bad = await cli(['discover', '--config', join(root, 'bad.json')], root);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toContain('No MCP servers found.');
    expect(bad.stdout).toMatch(/bad\.json: port: .*\(file ignored\)/);
    expect(bad.stderr).toMatch(/^switchboard: .*bad\.json: port: [^\n]*\(serve would refuse to start\)\n$/);

    const unknown = await cli(['nope'], root);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "nope"');
  });
});
