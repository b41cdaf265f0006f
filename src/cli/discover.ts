import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { discoverMCPServers } from '../config/discover.js';
import { loadDaemonConfig } from '../config/load.js';
import { DaemonSettingsSchema, type DaemonConfig } from '../config/schema.js';
import { errorMessage, isSwitchboardError } from '../errors.js';
import { EXIT_OK, EXIT_USAGE, oneLine, type CliContext } from './context.js';
import { discoverJson, discoverTable } from './discover-view.js';
import { renderHelp, usageOf } from './help.js';

export const DISCOVER_USAGE = usageOf('discover');

const OPTIONS = {
  cwd: { type: 'string' },
  config: { type: 'string' },
  'no-project-config': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/**
 * `switchboard discover`. Always prints what discovery finds, every bad entry marked with its
 * reason. Exit 0 even with warnings (they are the point of the command); exit 2 on bad flags, or
 * — after the table — when Switchboard's own file is unreadable or has an invalid daemon-level
 * setting, because `serve` would refuse to start with it too (an invalid server entry would only
 * be skipped, as here).
 */
export async function runDiscover(ctx: CliContext): Promise<number> {
  const usageError = (message: string): number => {
    ctx.stderr.write(`switchboard discover: ${oneLine(message)}\n${DISCOVER_USAGE}\n`);
    return EXIT_USAGE;
  };

  let values: { cwd?: string; config?: string; 'no-project-config'?: boolean; json?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({ args: ctx.argv, options: OPTIONS, strict: true, allowPositionals: false }));
  } catch (err) {
    return usageError(errorMessage(err));
  }
  if (values.help) {
    ctx.stdout.write(renderHelp('discover'));
    return EXIT_OK;
  }

  const cwd = resolve(ctx.cwd, values.cwd ?? '.');
  if (!(await isDirectory(cwd))) return usageError(`--cwd ${cwd}: not a directory`);
  const configPath = values.config === undefined ? undefined : resolve(ctx.cwd, values.config);

  // With a file serve would refuse, the table is still printed, read with the defaults.
  let daemon: Pick<DaemonConfig, 'enableProjectConfig' | 'port'> = DaemonSettingsSchema.parse({});
  let refusal: string | undefined;
  try {
    daemon = await loadDaemonConfig({ env: ctx.env, home: ctx.home, cwd: ctx.cwd, ...(configPath ? { path: configPath } : {}) });
  } catch (err) {
    if (!isSwitchboardError(err, 'CONFIG_INVALID')) throw err;
    refusal = err.message;
  }
  const enableProjectConfig = values['no-project-config'] ? false : daemon.enableProjectConfig;
  // The port `serve` would listen on with this config: an entry pointing there is the daemon itself.
  const selfPorts = daemon.port > 0 ? [daemon.port] : [];

  const report = await discoverMCPServers({
    cwd,
    home: ctx.home,
    env: ctx.env,
    platform: ctx.platform ?? process.platform,
    enableProjectConfig,
    selfPorts,
    ...(configPath ? { configPath } : {}),
  });
  ctx.stdout.write(values.json ? discoverJson(report, cwd) : discoverTable(report, cwd));
  if (refusal === undefined) return EXIT_OK;
  ctx.stderr.write(`switchboard: ${oneLine(refusal)} (serve would refuse to start)\n`);
  return EXIT_USAGE;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
