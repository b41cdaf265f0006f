import { existsSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { errorMessage } from '../errors.js';
import { EXIT_OK, EXIT_USAGE, oneLine, type CliContext } from './context.js';
import { renderHelp, usageOf } from './help.js';
import { LAUNCHD_LABEL, launchdLogPath, renderLaunchdPlist, renderSystemdUnit, unitPath, type ServiceManager, type ServiceSpec } from './service-units.js';

export const SERVICE_USAGE = usageOf('service');

const OPTIONS = {
  platform: { type: 'string' },
  force: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface ServiceContext extends CliContext {
  /** The node binary the service runs. @default process.execPath */
  execPath?: string;
  /** The CLI script the service runs. @default process.argv[1], symlinks resolved */
  script?: string;
}

/**
 * `switchboard service print|install|uninstall [--platform systemd|launchd] [--force] [-- serve args…]`:
 * the per-user service that runs `switchboard serve` at login. `install` writes the file and
 * says how to start it; it starts nothing itself, so it never needs a session bus or launchd to
 * be reachable, and what it did can be read back.
 */
export async function runService(ctx: ServiceContext): Promise<number> {
  const dashdash = ctx.argv.indexOf('--');
  const own = dashdash === -1 ? ctx.argv : ctx.argv.slice(0, dashdash);
  const serveArgs = dashdash === -1 ? [] : ctx.argv.slice(dashdash + 1);
  const usageError = (message: string): number => {
    ctx.stderr.write(`switchboard service: ${oneLine(message)}\n${SERVICE_USAGE}\n`);
    return EXIT_USAGE;
  };

  let values: { platform?: string; force?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: own, options: OPTIONS, strict: true, allowPositionals: true }));
  } catch (err) {
    return usageError(errorMessage(err));
  }
  if (values.help) {
    ctx.stdout.write(renderHelp('service'));
    return EXIT_OK;
  }
  const [action, extra] = positionals;
  if (action !== 'print' && action !== 'install' && action !== 'uninstall') return usageError(action ? `unknown action "${action}"` : 'missing action');
  if (extra !== undefined) return usageError(`unexpected argument "${extra}" (serve's flags go after --)`);
  const manager = managerFor(values.platform, ctx.platform ?? process.platform);
  if (typeof manager !== 'string') return usageError(manager.error);

  const spec: ServiceSpec = {
    node: ctx.execPath ?? process.execPath,
    script: ctx.script ?? realScript(process.argv[1] ?? ''),
    // Relative paths (a --config beside you) would resolve against the service's home directory.
    serveArgs: absolutePaths(serveArgs, ctx.cwd),
    home: ctx.home,
    path: ctx.env.PATH,
  };
  const file = manager === 'systemd' ? renderSystemdUnit(spec) : renderLaunchdPlist(spec);
  const path = unitPath(manager, ctx.home, ctx.env);

  if (action === 'print') {
    ctx.stdout.write(file);
    return EXIT_OK;
  }
  if (action === 'uninstall') {
    if (!existsSync(path)) {
      ctx.stdout.write(`nothing to remove: ${path} does not exist\n`);
      return EXIT_OK;
    }
    ctx.stdout.write(`Stop it first:\n  ${stopCommand(manager, path)}\n`);
    rmSync(path);
    ctx.stdout.write(`removed ${path}\n`);
    return EXIT_OK;
  }
  if (existsSync(path) && !values.force) {
    ctx.stderr.write(`switchboard service: ${path} exists; --force replaces it (or "switchboard service print" shows the new one)\n`);
    return 1;
  }
  mkdirSync(dirname(path), { recursive: true });
  // launchd opens the log file but does not create its directory.
  if (manager === 'launchd') mkdirSync(dirname(launchdLogPath(ctx.home)), { recursive: true });
  writeFileSync(path, file);
  ctx.stdout.write(`wrote ${path}\n${nextSteps(manager, path, ctx.home)}`);
  return EXIT_OK;
}

function managerFor(platform: string | undefined, os: NodeJS.Platform): ServiceManager | { error: string } {
  if (platform === 'systemd' || platform === 'launchd') return platform;
  if (platform !== undefined) return { error: `unknown --platform "${platform}": systemd or launchd` };
  if (os === 'linux') return 'systemd';
  if (os === 'darwin') return 'launchd';
  return { error: `no service manager known for ${os}: choose one with --platform systemd|launchd` };
}

function nextSteps(manager: ServiceManager, path: string, home: string): string {
  if (manager === 'systemd') {
    return [
      'Start it now and at every login:',
      '  systemctl --user daemon-reload && systemctl --user enable --now switchboard',
      'Its log (the journal):',
      '  journalctl --user -u switchboard -f',
      'Keep it running while you are logged out:',
      '  loginctl enable-linger "$USER"',
      '',
    ].join('\n');
  }
  return ['Start it now and at every login:', `  launchctl bootstrap gui/$(id -u) ${path}`, 'Its log:', `  tail -f ${launchdLogPath(home)}`, ''].join('\n');
}

function stopCommand(manager: ServiceManager, path: string): string {
  return manager === 'systemd' ? 'systemctl --user disable --now switchboard' : `launchctl bootout gui/$(id -u)/${LAUNCHD_LABEL} (or: launchctl bootout gui/$(id -u) ${path})`;
}

/** npm puts a symlink on PATH; the service runs the file it points to. */
function realScript(script: string): string {
  try {
    return realpathSync(script);
  } catch {
    return resolve(script);
  }
}

/** The values of serve's path flags made absolute against the directory `install` ran in. */
function absolutePaths(args: readonly string[], cwd: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if (flag !== '--config' && flag !== '--cwd') out.push(arg);
    else if (inline !== undefined) out.push(`${flag}=${resolve(cwd, inline)}`);
    else if (i + 1 < args.length) out.push(flag, resolve(cwd, args[++i]!));
    else out.push(arg);
  }
  return out;
}
