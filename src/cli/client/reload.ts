import { isRecord } from './daemon-client.js';
import { clientFor, CONNECTION_OPTIONS, helpRequested, parseCommandArgs, runCommand, UsageError, writeRaw, type CommandIo } from './command.js';
import { usageOf } from '../help.js';
import { listOf, loadErrorSection, serverLine, serverTable, type ServerRow } from './views.js';

export const RELOAD_USAGE = usageOf('reload');

/** Reloads wait for discovery and every connect (30 s connect timeout per server by default). */
export const OPERATION_TIMEOUT_MS = 120_000;

const RELOAD_OPTIONS = { ...CONNECTION_OPTIONS, force: { type: 'boolean' } } as const;

/** `switchboard reload [server] [--force]`: apply the config again (or restart all), or reconnect one server. */
export function runReload(io: CommandIo): Promise<number> {
  return runCommand(io, RELOAD_USAGE, async () => {
    const { values, positionals } = parseCommandArgs(io.argv, RELOAD_OPTIONS);
    if (helpRequested(values, io, 'reload')) return 0;
    const [server, extra] = positionals;
    if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
    if (server !== undefined && values.force) throw new UsageError('--force applies to a full reload, not to one server');
    const path = server === undefined ? `/reload${values.force ? '?force=true' : ''}` : `/servers/${encodeURIComponent(server)}/reload`;
    const res = await clientFor(values, io).request('POST', path, { timeoutMs: OPERATION_TIMEOUT_MS });
    if (values.json) {
      writeRaw(io, res.text);
      return 0;
    }
    if (server !== undefined) {
      io.stdout.write(`reloaded ${serverLine(serverOf(res.body, server))}\n`);
      return 0;
    }
    const out = [serverTable(listOf<ServerRow>(res.body, 'servers'))];
    out.push(...loadErrorSection(res.body));
    io.stdout.write(`${out.join('\n')}\n`);
    return 0;
  });
}

/** The server detail of a one-server operation, whether bare or under `server`. */
export function serverOf(body: unknown, name: string): ServerRow {
  if (isRecord(body) && isRecord(body.server)) return { name, ...(body.server as Partial<ServerRow>) };
  if (isRecord(body)) return { name, ...(body as Partial<ServerRow>) };
  return { name };
}
