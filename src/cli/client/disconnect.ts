import { clientFor, CONNECTION_OPTIONS, helpRequested, parseCommandArgs, runCommand, UsageError, writeRaw, type CommandIo } from './command.js';
import { usageOf } from '../help.js';
import { OPERATION_TIMEOUT_MS, serverOf } from './reload.js';
import { serverLine } from './views.js';

export const DISCONNECT_USAGE = usageOf('disconnect');

/** `switchboard disconnect <server>`: closes one server's connection and drops its tools. */
export function runDisconnect(io: CommandIo): Promise<number> {
  return runCommand(io, DISCONNECT_USAGE, async () => {
    const { values, positionals } = parseCommandArgs(io.argv, CONNECTION_OPTIONS);
    if (helpRequested(values, io, 'disconnect')) return 0;
    const [server, extra] = positionals;
    if (server === undefined) throw new UsageError('missing <server>');
    if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
    const res = await clientFor(values, io).request('POST', `/servers/${encodeURIComponent(server)}/disconnect`, {
      timeoutMs: OPERATION_TIMEOUT_MS,
    });
    if (values.json) writeRaw(io, res.text);
    else io.stdout.write(`disconnected ${serverLine(serverOf(res.body, server))}\n`);
    return 0;
  });
}
