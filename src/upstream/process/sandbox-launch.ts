import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { SwitchboardError } from '../../errors.js';
import { bwrapArgs, type SandboxPlan } from './sandbox-plan.js';

/**
 * Turns a stdio server's command into its sandboxed command (issue #42): `[prlimit …] bwrap … --
 * command args`. Fails with `SANDBOX_UNAVAILABLE` and the exact reason — never starts the server
 * unsandboxed — when this is not Linux, bwrap (or prlimit, for limits) is not on PATH, or the
 * kernel refuses the namespaces (checked by running bwrap once per daemon; a failure is checked
 * again at the next connect, so installing bubblewrap needs no restart).
 */

export interface Launch {
  command: string;
  args?: string[];
}

const INSTALL_HINT = 'install the package "bubblewrap" (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)';
/** How long the namespace check may take. */
const PROBE_TIMEOUT_MS = 10_000;

/** Namespace checks that passed, by bwrap path and network mode. */
const passed = new Set<string>();

export async function sandboxedLaunch(plan: SandboxPlan, launch: Launch, env: NodeJS.ProcessEnv = process.env): Promise<Launch> {
  if (process.platform !== 'linux') {
    throw unavailable(`sandboxing needs Linux and bubblewrap; ${process.platform} is not supported yet (run this server without "sandbox")`);
  }
  const bwrap = onPath('bwrap', env);
  if (bwrap === undefined) throw unavailable(`bubblewrap ("bwrap") is not on PATH (${searched(env)}): ${INSTALL_HINT}`);
  await checkNamespaces(bwrap, plan.network);
  const sandboxed = [...bwrapArgs(plan), '--', launch.command, ...(launch.args ?? [])];
  const limits = [...(plan.memoryMiB !== null ? [`--data=${plan.memoryMiB * 1024 * 1024}`] : []), ...(plan.pids !== null ? [`--nproc=${plan.pids}`] : [])];
  if (limits.length === 0) return { command: bwrap, args: sandboxed };
  const prlimit = onPath('prlimit', env);
  if (prlimit === undefined) throw unavailable(`"memoryMiB" and "pids" need prlimit, which is not on PATH (${searched(env)}): install the package "util-linux"`);
  return { command: prlimit, args: [...limits, '--', bwrap, ...sandboxed] };
}

function unavailable(reason: string): SwitchboardError {
  return new SwitchboardError('SANDBOX_UNAVAILABLE', `sandbox unavailable: ${reason}`);
}

function searched(env: NodeJS.ProcessEnv): string {
  const dirs = (env.PATH ?? '').split(delimiter).filter(Boolean);
  return dirs.length === 0 ? 'PATH is empty' : `searched ${dirs.join(', ')}`;
}

/** The first executable `name` on `env.PATH`. */
export function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Runs `bwrap … true` with the namespaces a server will get: what the kernel refuses (user
 * namespaces off, an AppArmor rule, a container without them) is said in bwrap's own words.
 */
async function checkNamespaces(bwrap: string, network: SandboxPlan['network']): Promise<void> {
  const key = `${bwrap}\0${network}`;
  if (passed.has(key)) return;
  const args = [
    '--ro-bind',
    '/',
    '/',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--unshare-all',
    ...(network === 'host' ? ['--share-net'] : []),
    '--die-with-parent',
    '--cap-drop',
    'ALL',
    '--',
    'true',
  ];
  const outcome = await new Promise<{ ok: true } | { ok: false; reason: string }>((resolve) => {
    execFile(bwrap, args, { timeout: PROBE_TIMEOUT_MS, env: {} }, (err, _stdout, stderr) => {
      if (!err) resolve({ ok: true });
      else resolve({ ok: false, reason: stderr.trim() || err.message });
    });
  });
  if (!outcome.ok) {
    throw unavailable(
      `${bwrap} cannot create the namespaces it needs: ${outcome.reason} (user namespaces may be disabled: check sysctl kernel.unprivileged_userns_clone / user.max_user_namespaces, or the AppArmor restriction kernel.apparmor_restrict_unprivileged_userns)`,
    );
  }
  passed.add(key);
}
