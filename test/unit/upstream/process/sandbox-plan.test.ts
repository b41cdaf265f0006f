import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ServerConfigSchema } from '../../../../src/config/server-schema.js';
import { expandEntryStrings } from '../../../../src/config/expand-vars.js';
import { isSwitchboardError } from '../../../../src/errors.js';
import { bwrapArgs, sandboxEnv, sandboxPlan, viewOf, type SandboxContext } from '../../../../src/upstream/process/sandbox-plan.js';
import { sandboxedLaunch } from '../../../../src/upstream/process/sandbox-launch.js';
import { tempDir } from '../../../helpers/process.js';

/** The sandbox's plan and bwrap command line (issue #42); the sandbox at work is test/integration/sandbox.test.ts. */

const server = { command: 'node', args: ['server.js'] };

/** The value following `flag` each time it occurs. */
function after(args: string[], flag: string): string[] {
  return args.flatMap((arg, i) => (arg === flag ? [args[i + 1] as string] : []));
}

describe('sandboxPlan', () => {
  it('is nothing without a sandbox, and the entry wins over the daemon default', () => {
    expect(sandboxPlan(server, { home: '/h', hidden: [] })).toBeUndefined();
    expect(sandboxPlan({ ...server, sandbox: false }, { home: '/h', hidden: [], defaults: true })).toBeUndefined();
    expect(sandboxPlan(server, { home: '/h', hidden: [], defaults: { network: 'none' } })?.network).toBe('none');
  });

  it('gives `true` the strict defaults: network host, the configured env, the cwd and the npm cache writable', async () => {
    const home = await tempDir();
    mkdirSync(join(home, '.npm'));
    const plan = sandboxPlan({ ...server, cwd: '/srv/app', sandbox: true }, { home, hidden: [] });
    expect(plan).toMatchObject({ network: 'host', env: 'configured', cwd: '/srv/app', read: [], write: ['/srv/app', join(home, '.npm')], memoryMiB: null, pids: null });
    expect(viewOf(plan!)).toEqual({ read: ['/'], write: ['/tmp', '/srv/app', join(home, '.npm')], network: 'host', memoryMiB: null, pids: null });
    // No cwd: the server starts in its private /tmp, never in the daemon's working directory.
    expect(sandboxPlan({ ...server, sandbox: true }, { home, hidden: [] })?.cwd).toBe('/tmp');
  });

  it('refuses a sandbox it cannot read with SANDBOX_UNAVAILABLE, never running without it', () => {
    const run = () => sandboxPlan({ ...server, sandbox: { network: 'wifi' } as never }, { home: '/h', hidden: [] });
    expect(run).toThrow(/"sandbox" is not valid/);
    try {
      run();
    } catch (err) {
      expect(isSwitchboardError(err, 'SANDBOX_UNAVAILABLE')).toBe(true);
    }
  });
});

describe('bwrapArgs', () => {
  it('mounts the root read-only, empties $HOME and /tmp, binds allowed paths, then masks the daemon’s own', async () => {
    const root = await tempDir();
    const home = join(root, 'home');
    const state = join(root, 'state');
    const work = join(root, 'work');
    for (const dir of [home, state, work]) mkdirSync(dir);
    const config = join(root, 'config.json');
    writeFileSync(config, '{}');
    const context: SandboxContext = { home, hidden: [state, config] };
    const plan = sandboxPlan({ ...server, cwd: work, sandbox: { allowRead: ['/opt/data'], allowWrite: ['/srv/out'], network: 'none' } }, context)!;
    const args = bwrapArgs(plan);
    expect(args.slice(0, 3)).toEqual(['--ro-bind', '/', '/']);
    expect(after(args, '--tmpfs')).toEqual(['/tmp', home, state]);
    expect(after(args, '--ro-bind-try')).toEqual(['/opt/data']);
    expect(after(args, '--bind-try')).toEqual([work, '/srv/out']);
    // The config file's folder holds the cwd: the file alone is masked, read as empty.
    expect(args.join(' ')).toContain(`--ro-bind /dev/null ${config}`);
    expect(args.indexOf(state)).toBeGreaterThan(args.indexOf('/srv/out'));
    expect(args).toContain('--unshare-all');
    expect(args).not.toContain('--share-net');
    expect(args).toEqual(expect.arrayContaining(['--die-with-parent', '--cap-drop', 'ALL']));
    expect(after(args, '--chdir')).toEqual([work]);
    expect(bwrapArgs({ ...plan, network: 'host' })).toContain('--share-net');
  });
});

describe('the daemon’s own paths', () => {
  it('are masked under every name they show at: their real path, and an allowed path that reaches them through a symlink', async () => {
    const root = await tempDir();
    const data = join(root, 'data');
    mkdirSync(join(data, 'switchboard'), { recursive: true });
    // The state folder named through a symlink, and an allowed path that is another one to its parent.
    symlinkSync(join(data, 'switchboard'), join(root, 'state'));
    symlinkSync(data, join(root, 'shared'));
    const plan = sandboxPlan({ ...server, sandbox: { allowRead: [join(root, 'shared')] } }, { home: '/nonexistent', hidden: [join(root, 'state')] })!;
    expect(after(bwrapArgs(plan), '--tmpfs')).toEqual(['/tmp', join(root, 'state'), join(data, 'switchboard'), join(root, 'shared', 'switchboard')]);
  });
});

describe('sandboxEnv', () => {
  const daemonEnv = { PATH: '/usr/bin', LANG: 'C.UTF-8', SECRET_TOKEN: 'x', USER: 'me' };

  it('passes only the entry’s env and what a command needs to start, with HOME the private one', () => {
    const plan = sandboxPlan({ ...server, sandbox: true }, { home: '/home/me', hidden: [] })!;
    expect(sandboxEnv(plan, { SHELL: '/bin/sh', SECRET_TOKEN: 'x' }, { API_KEY: 'k' }, daemonEnv)).toEqual({
      HOME: '/home/me',
      TMPDIR: '/tmp',
      PATH: '/usr/bin',
      USER: 'me',
      LANG: 'C.UTF-8',
      API_KEY: 'k',
    });
    const inherit = sandboxPlan({ ...server, sandbox: { env: 'inherit' } }, { home: '/home/me', hidden: [] })!;
    expect(sandboxEnv(inherit, { SHELL: '/bin/sh', SECRET_TOKEN: 'x' }, undefined, daemonEnv)).toEqual({ SHELL: '/bin/sh', SECRET_TOKEN: 'x', HOME: '/home/me' });
  });
});

describe('sandboxedLaunch', () => {
  const plan = sandboxPlan({ ...server, sandbox: { memoryMiB: 512, pids: 64 } }, { home: '/nonexistent', hidden: [] })!;

  it('names the package to install when bwrap is not on PATH', async () => {
    const empty = await tempDir();
    await expect(sandboxedLaunch(plan, server, { PATH: empty })).rejects.toMatchObject({
      code: 'SANDBOX_UNAVAILABLE',
      message: expect.stringContaining(`bubblewrap ("bwrap") is not on PATH (searched ${empty}): install the package "bubblewrap"`),
    });
  });

  it.runIf(process.platform === 'linux')('passes on, word for word, why the kernel refused the namespaces', async () => {
    const dir = await tempDir();
    // A bwrap as a kernel without unprivileged user namespaces answers it.
    const refusal = 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.';
    writeFileSync(join(dir, 'bwrap'), `#!/bin/sh\necho '${refusal}' >&2\nexit 1\n`, { mode: 0o755 });
    const refused = sandboxPlan({ ...server, sandbox: true }, { home: '/nonexistent', hidden: [] })!;
    await expect(sandboxedLaunch(refused, server, { PATH: dir })).rejects.toMatchObject({
      code: 'SANDBOX_UNAVAILABLE',
      message: expect.stringContaining(`${join(dir, 'bwrap')} cannot create the namespaces it needs: ${refusal}`),
    });
  });

  it.runIf(process.platform === 'linux')('puts the limits in front with prlimit: RLIMIT_DATA and RLIMIT_NPROC', async () => {
    const launch = await sandboxedLaunch(plan, server, { PATH: process.env.PATH });
    expect(launch.command).toMatch(/\/prlimit$/);
    expect(launch.args?.slice(0, 3)).toEqual([`--data=${512 * 1024 * 1024}`, '--nproc=64', '--']);
    expect(launch.args?.[3]).toMatch(/\/bwrap$/);
    expect(launch.args?.slice(-3)).toEqual(['--', 'node', 'server.js']);
  });
});

describe('the sandbox setting', () => {
  it('takes absolute paths (${userHome} expanded) and refuses relative ones and unknown keys', () => {
    const expanded = expandEntryStrings({ command: 'x', sandbox: { allowRead: ['${userHome}/.cache'] } }, { userHome: '/home/me' });
    expect(ServerConfigSchema.parse(expanded).sandbox).toEqual({ allowRead: ['/home/me/.cache'] });
    expect(ServerConfigSchema.safeParse({ command: 'x', sandbox: { allowWrite: ['out'] } }).error?.issues[0]?.message).toMatch(/absolute/);
    expect(ServerConfigSchema.safeParse({ command: 'x', sandbox: { network: 'none', mounts: [] } }).success).toBe(false);
    expect(ServerConfigSchema.safeParse({ command: 'x', sandbox: true }).success).toBe(true);
  });
});
