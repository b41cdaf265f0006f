import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, type CliRun } from '../helpers/cli-run.js';
import { tempDir } from '../helpers/process.js';
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js';

/**
 * Issue #22: the `agents` commands as a user runs them — the real CLI bundle against a real
 * `switchboard serve` — and the config's `agents` table: an invalid entry is reported by path and
 * left out while the rest applies; a name used by the config and `agents add` alike is an error.
 */

const SPAWN_TIMEOUT_MS = 60_000;
const CONFIG_KEY = 'config-agent-key-0123456789abcdef';

/** `switchboard <args>` with HOME set (where a daemon without a token keeps the operator key). */
function cli(args: string[], home: string, url: string): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, SWITCHBOARD_URL: url };
  for (const name of ['SWITCHBOARD_TOKEN', 'SWITCHBOARD_CONFIG', 'XDG_STATE_HOME']) delete env[name];
  return runCli(args, { env });
}

async function serveWith(home: string, agents: Record<string, unknown>): Promise<{ serve: ServeProcess; url: string }> {
  const configPath = join(home, 'switchboard.json');
  await writeFile(configPath, JSON.stringify({ agents }));
  const serve = spawnServe(['--config', configPath, '--port', '0'], { home, cwd: home });
  const listening = await serve.waitForLog((entry) => typeof entry.url === 'string' && entry.msg?.startsWith('listening') === true);
  return { serve, url: listening.url as string };
}

async function get(url: string, key: string | undefined, method = 'GET'): Promise<{ status: number; code?: string }> {
  const res = await fetch(url, { method, ...(key ? { headers: { authorization: `Bearer ${key}` } } : {}) });
  const body = (await res.json()) as { error?: { code: string } };
  return { status: res.status, ...(body.error ? { code: body.error.code } : {}) };
}

describe('switchboard agents (child processes)', () => {
  it(
    'applies the valid config agents, reports the invalid ones by path, and adds an agent whose printed key works',
    async () => {
      const home = await tempDir();
      const { serve, url } = await serveWith(home, {
        // A `!cmd` key: run once at start, never written anywhere.
        good: { servers: ['echo'], key: `!printf ${CONFIG_KEY}` },
        broken: { servers: ['a['] },
        wrong: { access: 'everything' },
      });
      const warning = await serve.waitForLog((entry) => entry.level === 40 && String(entry.msg).includes('agent "broken" ignored'));
      expect(warning.msg).toContain('agents.broken.servers.0: malformed glob "a["');
      const wrong = await serve.waitForLog((entry) => String(entry.msg).includes('agent "wrong" ignored'));
      expect(wrong.msg).toContain('agents.wrong.access: access must be "read", "write" or "all"');

      // The valid agent applies: its key opens the agent routes, and keys are now required.
      expect(await get(`${url}/tools`, CONFIG_KEY)).toEqual({ status: 200 });
      expect(await get(`${url}/tools`, undefined)).toEqual({ status: 401, code: 'UNAUTHORIZED' });

      // No token configured: the daemon keeps an operator key beside its database (0600), which
      // the CLI on this machine (same HOME) picks up by itself.
      const keyFile = join(home, '.local', 'state', 'switchboard', 'operator.key');
      expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
      const added = await cli(['agents', 'add', 'ci', '--servers', 'echo,git*', '--access', 'read', '--expires', '30d'], home, url);
      expect(added.stderr).toBe('');
      expect(added.code).toBe(0);
      const key = added.stdout.trim().split('\n').at(-1) as string;
      expect(key).toMatch(/^sbk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
      expect(await get(`${url}/tools`, key)).toEqual({ status: 200 });
      expect(await get(`${url}/reload`, key, 'POST')).toEqual({ status: 403, code: 'FORBIDDEN' });

      const listed = await cli(['agents', 'list'], home, url);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(/^ci\s+cli\s+active\s+read\s+echo,git\*/m);
      expect(listed.stdout).toMatch(/^good\s+config\s+active\s+all\s+echo/m);
      expect(listed.stdout).not.toContain(key.slice(4));

      const shown = await cli(['agents', 'show', 'ci', '--json'], home, url);
      expect(JSON.parse(shown.stdout)).toMatchObject({ name: 'ci', servers: ['echo', 'git*'], access: 'read', expiresAt: expect.any(String) });

      // Elsewhere (another HOME, no key) the CLI is refused; the config key cannot be rotated here.
      const stranger = await cli(['agents', 'list'], await tempDir(), url);
      expect(stranger).toMatchObject({ code: 1, stderr: expect.stringContaining('UNAUTHORIZED') });
      expect(await cli(['agents', 'rotate', 'good'], home, url)).toMatchObject({ code: 1, stderr: expect.stringContaining('AGENT_IN_CONFIG') });

      const revoked = await cli(['agents', 'revoke', 'ci'], home, url);
      expect(revoked.code).toBe(0);
      expect(await get(`${url}/tools`, key)).toEqual({ status: 401, code: 'KEY_REVOKED' });
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'keeps stored agents across restarts, and reports a config agent of the same name',
    async () => {
      const home = await tempDir();
      const first = await serveWith(home, { seed: { key: CONFIG_KEY } });
      const added = await cli(['agents', 'add', 'twin'], home, first.url);
      expect(added.code).toBe(0);
      const key = added.stdout.trim().split('\n').at(-1) as string;
      first.serve.child.kill('SIGTERM');
      expect(await first.serve.exited).toEqual({ code: 0, signal: null });

      const second = await serveWith(home, { seed: { key: CONFIG_KEY }, twin: { servers: ['x'], key: 'twin-from-config-0123456789' } });
      const error = await second.serve.waitForLog((entry) => String(entry.msg).startsWith('agents.twin:'));
      expect(error.msg).toContain('an agent named "twin" was also created with "switchboard agents add"; the config entry is ignored');
      expect(await get(`${second.url}/tools`, key)).toEqual({ status: 200 });
      expect(await get(`${second.url}/tools`, 'twin-from-config-0123456789')).toEqual({ status: 401, code: 'UNAUTHORIZED' });
      expect(await get(`${second.url}/tools`, CONFIG_KEY)).toEqual({ status: 200 });
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    'the first key says that clients now need one and where the operator key is; the CLI goes on by itself',
    async () => {
      const home = await tempDir();
      const { url } = await serveWith(home, {});
      expect(await get(`${url}/tools`, undefined)).toEqual({ status: 200 });

      const first = await cli(['agents', 'add', 'inspector', '--catalogue', 'full'], home, url);
      expect(first.code).toBe(0);
      const keyFile = join(home, '.local', 'state', 'switchboard', 'operator.key');
      expect(first.stderr).toBe(
        `switchboard: This is the first agent key: every client without a key now gets 401. The operator key (for the CLI, the dashboard and other operator tools) is in ${keyFile}; the switchboard CLI on this machine reads it by itself, and the dashboard asks for it once per tab.\n`,
      );
      const key = first.stdout.trim().split('\n').at(-1) as string;
      expect(key).toMatch(/^sbk_/);
      expect(await get(`${url}/tools`, undefined)).toEqual({ status: 401, code: 'UNAUTHORIZED' });
      const operatorKey = (await readFile(keyFile, 'utf8')).trim();
      const shown = await fetch(`${url}/agents/inspector`, { headers: { authorization: `Bearer ${operatorKey}` } });
      expect(await shown.json()).toMatchObject({ name: 'inspector', catalogue: 'full' });

      // The CLI read the operator key by itself; the second key says nothing more.
      const second = await cli(['agents', 'add', 'other'], home, url);
      expect(second).toMatchObject({ code: 0, stderr: '' });
      expect((await cli(['status'], home, url)).code).toBe(0);
    },
    SPAWN_TIMEOUT_MS,
  );
});
