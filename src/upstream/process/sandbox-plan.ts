import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, isAbsolute, resolve } from 'node:path';
import { SwitchboardError } from '../../errors.js';
import type { ServerConfig } from '../../config/types.js';
import { SandboxSettingsSchema, type SandboxObject } from '../../config/sandbox-schema.js';

/**
 * What a sandboxed stdio server may see and do (issue #42, SPEC §23), and the bubblewrap command
 * line that enforces it. Pure but for `existsSync`: whether a path is there decides how it is
 * bound or hidden. Starting it (finding bwrap, checking namespaces) is sandbox-launch.ts.
 */

/** What the daemon knows that a sandbox needs, handed down from the composition root. */
export interface SandboxContext {
  /** The daemon-wide `sandbox`, for stdio servers whose entry does not say. */
  defaults?: ServerConfig['sandbox'];
  /** The daemon's user's home: replaced by an empty private directory. */
  home: string;
  /** The daemon's own files and folders (store, keys, config): never visible inside. */
  hidden: readonly string[];
  /** The environment bwrap and prlimit are looked up in (PATH). @default process.env */
  env?: NodeJS.ProcessEnv;
}

export interface SandboxPlan {
  /** Readable besides the read-only root (which lacks $HOME, /tmp and `hidden`). */
  read: string[];
  /** Writable: the server's cwd (or its private /tmp), `allowWrite`, the npm cache. */
  write: string[];
  network: 'none' | 'host';
  env: 'configured' | 'inherit';
  memoryMiB: number | null;
  pids: number | null;
  home: string;
  /** Where the server starts: its `cwd`, or its private /tmp when the entry names none. */
  cwd: string;
  hidden: string[];
}

/** What `GET /servers/:name`, `/status` and the start log show of a plan. */
export interface SandboxView {
  read: string[];
  write: string[];
  network: 'none' | 'host';
  memoryMiB: number | null;
  pids: number | null;
}

/** The entry's sandbox, else the daemon's; undefined for an unsandboxed (or non-stdio) server. */
export function sandboxPlan(config: ServerConfig, context: SandboxContext | undefined): SandboxPlan | undefined {
  const given = config.sandbox ?? context?.defaults;
  if (given === undefined || given === false) return undefined;
  const parsed = SandboxSettingsSchema.safeParse(given);
  if (!parsed.success) {
    throw new SwitchboardError('SANDBOX_UNAVAILABLE', `the entry's "sandbox" is not valid: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`);
  }
  const settings: SandboxObject = parsed.data === true ? {} : (parsed.data as SandboxObject);
  const home = context?.home ?? homedir();
  const npmCache = config.env?.npm_config_cache ?? join(home, '.npm');
  const cwd = config.cwd ? resolve(config.cwd) : '/tmp';
  const write = [...(config.cwd ? [cwd] : []), ...(settings.allowWrite ?? []), ...(existsSync(npmCache) ? [npmCache] : [])];
  return {
    read: [...(settings.allowRead ?? [])],
    write: unique(write),
    network: settings.network ?? 'host',
    env: settings.env ?? 'configured',
    memoryMiB: settings.memoryMiB ?? null,
    pids: settings.pids ?? null,
    home,
    cwd,
    hidden: unique([...(context?.hidden ?? [])]),
  };
}

export function viewOf(plan: SandboxPlan): SandboxView {
  return { read: ['/', ...plan.read], write: ['/tmp', ...plan.write], network: plan.network, memoryMiB: plan.memoryMiB, pids: plan.pids };
}

/** Whether `inner` is `outer` or lies inside it. */
function within(inner: string, outer: string): boolean {
  const rel = relative(outer, inner);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * bwrap's arguments up to `--`: mounts in order (later ones win), then namespaces and privileges.
 * The root is read-only; $HOME and /tmp are empty tmpfs; allowed paths are bound back in; the
 * daemon's own paths are masked last, so no allowance can reveal them. No `--new-session`: the
 * daemon starts every server in a session of its own (`detached`), which has no terminal to
 * inject into, and one process group is what the teardown signals.
 */
export function bwrapArgs(plan: SandboxPlan): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  if (plan.home !== '/' && existsSync(plan.home)) args.push('--tmpfs', plan.home);
  for (const path of plan.read) args.push('--ro-bind-try', path, path);
  for (const path of plan.write) args.push('--bind-try', path, path);
  const visible = [...plan.read, ...plan.write, plan.cwd];
  for (const path of plan.hidden) for (const target of maskTargets(path, visible)) args.push(...maskArgs(target, visible));
  args.push('--unshare-all');
  if (plan.network === 'host') args.push('--share-net');
  args.push('--die-with-parent', '--cap-drop', 'ALL', '--chdir', plan.cwd);
  return args;
}

/**
 * Where one of the daemon's paths shows inside: as named, as its real path (under the read-only
 * root), and under each allowed path that reaches it through a symlink (bound elsewhere, a folder
 * shows what is in it, whatever is mounted at its other names).
 */
function maskTargets(hidden: string, visible: readonly string[]): string[] {
  if (!existsSync(hidden)) return [];
  const real = realpathSync(hidden);
  const targets = new Set([hidden, real]);
  for (const shown of visible) {
    if (!existsSync(shown)) continue;
    const realShown = realpathSync(shown);
    if (within(real, realShown)) targets.add(join(shown, relative(realShown, real)));
  }
  return [...targets];
}

/**
 * Hides one of the daemon's paths: an empty tmpfs over it, or over a file's folder, so that a
 * read fails with ENOENT. Where something the server may see lies inside, the folder's entries are
 * hidden one by one instead, and a file in it reads as empty (/dev/null over it): hiding wins.
 */
function maskArgs(path: string, visible: readonly string[]): string[] {
  if (!existsSync(path)) return [];
  const isFolder = statSync(path).isDirectory();
  const folder = isFolder ? path : dirname(path);
  if (!visible.some((shown) => within(shown, folder))) return ['--tmpfs', folder];
  if (!isFolder) return ['--ro-bind', '/dev/null', path];
  return readdirSync(path).flatMap((entry) => maskArgs(join(path, entry), visible));
}

/** The sandboxed server's environment: the entry's own `env` over the few a command needs to start. */
export function sandboxEnv(
  plan: SandboxPlan,
  inherited: Record<string, string>,
  configured: Record<string, string> | undefined,
  daemonEnv: NodeJS.ProcessEnv,
): Record<string, string> {
  if (plan.env === 'inherit') return { ...inherited, HOME: plan.home };
  const env: Record<string, string> = { HOME: plan.home, TMPDIR: '/tmp' };
  for (const name of ['PATH', 'USER', 'LOGNAME', 'LANG', 'LC_ALL']) {
    const value = daemonEnv[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...configured };
}

function unique(paths: string[]): string[] {
  return [...new Set(paths.map((path) => resolve(path)))];
}
