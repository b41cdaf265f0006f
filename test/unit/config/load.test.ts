import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultDbPath, loadDaemonConfig } from '../../../src/config/load.js';
import { isSwitchboardError } from '../../../src/errors.js';
import { makeTree } from './temp-tree.js';

/** The CONFIG_INVALID message of a load that must fail. */
async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    expect(isSwitchboardError(err, 'CONFIG_INVALID')).toBe(true);
    return (err as Error).message;
  }
  throw new Error('expected loadDaemonConfig to fail');
}

describe('loadDaemonConfig', () => {
  it('gives the defaults when the default file is missing', async () => {
    const t = await makeTree();
    const config = await loadDaemonConfig({ env: {}, home: t.home });
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 7337,
      startupGateMs: 250,
      shutdownGraceMs: 10_000,
      enableProjectConfig: true,
      trustProjectCommands: false,
      mcpServers: {},
      dbPath: join(t.home, '.local', 'state', 'switchboard', 'switchboard.db'),
    });
    expect(config.token).toBeUndefined();
  });

  it('fails on a missing explicit file, from --config or $SWITCHBOARD_CONFIG', async () => {
    const t = await makeTree();
    const missing = join(t.root, 'nope.json');
    expect(await failure(loadDaemonConfig({ path: missing, env: {}, home: t.home }))).toBe(`${missing}: config file not found`);
    expect(await failure(loadDaemonConfig({ env: { SWITCHBOARD_CONFIG: missing }, home: t.home }))).toBe(`${missing}: config file not found`);
  });

  it('leaves an invalid server entry out, naming its field path, and loads the rest (issue #36 item 2)', async () => {
    const t = await makeTree();
    const path = await t.write('sb.json', { port: 7400, mcpServers: { github: { type: 'http', url: 'not a url' }, typo: { comand: 'node' }, good: { command: 'node' } } });
    const config = await loadDaemonConfig({ path, env: {}, home: t.home });
    expect(config.port).toBe(7400);
    expect(Object.keys(config.mcpServers)).toEqual(['good']);
    expect(config.serverIssues).toEqual([
      `${path}: server "github" ignored: mcpServers.github.url: Invalid url`,
      `${path}: server "typo" ignored: mcpServers.typo.comand: unknown key`,
    ]);
    // Discovery reports these; a start must not log them a second time.
    expect(config.warnings).toEqual([]);
  });

  it("checks a server's oauth block: known keys only, an https metadata URL, no secret without an id", async () => {
    const t = await makeTree();
    const good = await t.write('good.json', {
      mcpServers: { corp: { url: 'https://mcp.example/mcp', oauth: { clientId: 'id', clientSecret: '${SECRET}', scopes: ['a', 'b'] } } },
    });
    const loaded = await loadDaemonConfig({ path: good, env: { SECRET: 's3' }, home: t.home });
    expect(loaded.mcpServers.corp?.oauth).toEqual({ clientId: 'id', clientSecret: 's3', scopes: ['a', 'b'] });
    const bad = await t.write('bad.json', {
      mcpServers: {
        a: { url: 'https://x.example/mcp', oauth: { clientSecret: 'lonely' } },
        b: { url: 'https://x.example/mcp', oauth: { clientMetadataUrl: 'http://plain.example/c.json' } },
        c: { url: 'https://x.example/mcp', oauth: { redirectUri: 'http://127.0.0.1/cb' } },
      },
    });
    const { serverIssues, mcpServers } = await loadDaemonConfig({ path: bad, env: {}, home: t.home });
    expect(mcpServers).toEqual({});
    const message = serverIssues.join('\n');
    expect(message).toContain('mcpServers.a.oauth.clientSecret: clientSecret needs clientId');
    expect(message).toContain('mcpServers.b.oauth.clientMetadataUrl: Expected an https URL');
    expect(message).toMatch(/mcpServers\.c\.oauth.*redirectUri/);
  });

  it('lists every problem: wrong types, unknown keys, retired keys with their replacement', async () => {
    const t = await makeTree();
    const path = await t.write('sb.json', {
      port: 'eighty',
      listen: '0.0.0.0:80',
      colour: 'blue',
      mcpServers: { a: { command: 'a', timeoutMs: 5 } },
    });
    const message = await failure(loadDaemonConfig({ path, env: {}, home: t.home }));
    expect(message).toContain('listen: no longer supported, use host and port instead');
    expect(message).not.toContain('listen: unknown key');
    expect(message).toContain('colour: unknown key');
    expect(message).toMatch(/port: [^;]*expected number/);

    // A retired key in a server entry makes that entry invalid, not the file.
    const entry = await t.write('entry.json', { mcpServers: { a: { command: 'a', timeoutMs: 5 } } });
    expect((await loadDaemonConfig({ path: entry, env: {}, home: t.home })).serverIssues).toEqual([
      `${entry}: server "a" ignored: mcpServers.a.timeoutMs: no longer supported, use timeout instead`,
    ]);
  });

  it("refuses a top-level `roots`, naming the server entry's as its replacement; an entry's roots are absolute (issue #36 item 1)", async () => {
    const t = await makeTree();
    const top = await t.write('top.json', { roots: ['/srv'] });
    expect(await failure(loadDaemonConfig({ path: top, env: {}, home: t.home }))).toBe(`${top}: roots: no longer supported, use mcpServers.<name>.roots instead`);

    const entries = await t.write('entries.json', {
      mcpServers: {
        good: { command: 'x', roots: ['/srv/shared', 'file:///srv/docs', '${HOME}/notes'] },
        relative: { command: 'x', roots: ['shared'] },
      },
    });
    const config = await loadDaemonConfig({ path: entries, env: { HOME: t.home }, home: t.home });
    expect(config.mcpServers.good?.roots).toEqual(['/srv/shared', 'file:///srv/docs', `${t.home}/notes`]);
    expect(config.serverIssues).toEqual([
      `${entries}: server "relative" ignored: mcpServers.relative.roots.0: a root is an absolute path or a file:// URI (\${userHome}/… names a folder in your home)`,
    ]);
  });

  it('reports bad JSON with its position', async () => {
    const t = await makeTree();
    const path = await t.write('sb.json', '{\n  "port": 1,,\n}');
    expect(await failure(loadDaemonConfig({ path, env: {}, home: t.home }))).toMatch(new RegExp(`^${path}:2:\\d+: invalid JSONC`));
  });

  it('applies SWITCHBOARD_TOKEN, _HOST and _PORT over the file, and names the variable when one is bad', async () => {
    const t = await makeTree();
    const path = await t.write('sb.json', { token: 'from-file', host: '0.0.0.0', port: 1 });
    const env = { SWITCHBOARD_TOKEN: 'from-env', SWITCHBOARD_HOST: '::1', SWITCHBOARD_PORT: '8123' };
    expect(await loadDaemonConfig({ path, env, home: t.home })).toMatchObject({ token: 'from-env', host: '::1', port: 8123 });
    expect(await loadDaemonConfig({ path, env: { SWITCHBOARD_TOKEN: '' }, home: t.home })).toMatchObject({ token: 'from-file' });

    const message = await failure(loadDaemonConfig({ path, env: { SWITCHBOARD_PORT: '99999' }, home: t.home }));
    expect(message).toMatch(new RegExp(`^${path}: port \\(from SWITCHBOARD_PORT\\): `));
  });

  it('takes a PostgreSQL store URL from `store`, SWITCHBOARD_DATABASE_URL winning; anything else is refused without echoing it', async () => {
    const t = await makeTree();
    expect((await loadDaemonConfig({ env: {}, home: t.home })).store).toBeUndefined();
    const path = await t.write('sb.json', { store: 'postgres://sb:file-pw@db.example:5432/sb' });
    expect(await loadDaemonConfig({ path, env: {}, home: t.home })).toMatchObject({ store: 'postgres://sb:file-pw@db.example:5432/sb' });
    const env = { SWITCHBOARD_DATABASE_URL: 'postgresql://sb:env-pw@db2.example/sb' };
    expect(await loadDaemonConfig({ path, env, home: t.home })).toMatchObject({ store: 'postgresql://sb:env-pw@db2.example/sb' });

    const bad = await t.write('bad.json', { store: 'mysql://sb:bad-pw@db.example/sb' });
    const message = await failure(loadDaemonConfig({ path: bad, env: {}, home: t.home }));
    expect(message).toBe(`${bad}: store: expected a postgres:// or postgresql:// URL (leave it out for the embedded SQLite file)`);
    const fromEnv = await failure(loadDaemonConfig({ path, env: { SWITCHBOARD_DATABASE_URL: 'sqlite:///x?pw=env-bad' }, home: t.home }));
    expect(fromEnv).toMatch(/store \(from SWITCHBOARD_DATABASE_URL\): expected a postgres/);
    expect(fromEnv).not.toContain('env-bad');
  });

  it('expands ${VAR} in server entries before validating them', async () => {
    const t = await makeTree();
    const path = await t.write('sb.json', { mcpServers: { api: { url: 'https://${API_HOST}/mcp' } } });
    const config = await loadDaemonConfig({ path, env: { API_HOST: 'api.example' }, home: t.home });
    expect(config.mcpServers.api).toEqual({ url: 'https://api.example/mcp' });
  });

  it('deep-freezes the result', async () => {
    const t = await makeTree();
    const path = await t.write('sb.json', { disabledServers: ['x'], mcpServers: { a: { command: 'a', args: ['1'] } } });
    const config = await loadDaemonConfig({ path, env: {}, home: t.home });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.disabledServers)).toBe(true);
    expect(Object.isFrozen(config.mcpServers.a?.args)).toBe(true);
    expect(() => (config.disabledServers as string[]).push('y')).toThrow(TypeError);
  });

  it('resolves a relative dbPath against the config file, and ~ against home', async () => {
    const t = await makeTree();
    const path = await t.write('etc/sb.json', { dbPath: 'data/sb.db' });
    expect((await loadDaemonConfig({ path, env: {}, home: t.home })).dbPath).toBe(join(t.root, 'etc', 'data', 'sb.db'));
    const tilde = await t.write('etc/tilde.json', { dbPath: '~/db/sb.db' });
    expect((await loadDaemonConfig({ path: tilde, env: {}, home: t.home })).dbPath).toBe(join(t.home, 'db', 'sb.db'));
  });
});

describe('defaultDbPath', () => {
  it('uses $XDG_STATE_HOME when it is absolute, else ~/.local/state', () => {
    expect(defaultDbPath('/home/me', { XDG_STATE_HOME: '/state' })).toBe('/state/switchboard/switchboard.db');
    expect(defaultDbPath('/home/me', { XDG_STATE_HOME: 'relative' })).toBe('/home/me/.local/state/switchboard/switchboard.db');
    expect(defaultDbPath('/home/me', {})).toBe('/home/me/.local/state/switchboard/switchboard.db');
  });
});
