import { clientFor, CONNECTION_OPTIONS, helpRequested, parseCommandArgs, runCommand, UsageError, writeRaw, type CommandIo } from './command.js';
import { usageOf } from '../help.js';
import { listOf, plural, relatedLines, searchTable, toolTable, type RelatedRow, type ServerRow, type ToolRow } from './views.js';
import { DaemonError, type DaemonClient } from './daemon-client.js';
import { nearestNames } from '../../util/nearest-names.js';
import { runToolsApprove } from './tools-approve.js';

export const TOOLS_USAGE = usageOf('tools');

const TOOLS_OPTIONS = {
  ...CONNECTION_OPTIONS,
  server: { type: 'string', short: 's' },
  query: { type: 'string', short: 'q' },
  search: { type: 'string' },
  limit: { type: 'string', short: 'n' },
} as const;

/** `switchboard tools`: the aggregated tools, optionally filtered by server or a search text. */
export function runTools(io: CommandIo): Promise<number> {
  return runCommand(io, TOOLS_USAGE, async () => {
    if (io.argv[0] === 'approve') return runToolsApprove({ ...io, argv: io.argv.slice(1) });
    const { values, positionals } = parseCommandArgs(io.argv, TOOLS_OPTIONS);
    if (helpRequested(values, io, 'tools')) return 0;
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    if (values.search !== undefined && values.query !== undefined) throw new UsageError('--search and --query do not go together');
    if (values.limit !== undefined && values.search === undefined) throw new UsageError('--limit goes with --search');
    // Ranked (issue #23): the daemon checks the query and the limit and names what is wrong.
    const res =
      values.search !== undefined
        ? await clientFor(values, io).request('GET', '/tools/search', { query: { q: values.search, limit: values.limit, server: values.server } })
        : await clientFor(values, io).request('GET', '/tools', { query: { server: values.server, q: values.query } });
    const tools = listOf<ToolRow>(res.body, 'tools');
    // No tools of a server may mean a typo in its name: `GET /tools?server=` filters, it does not check.
    if (values.server !== undefined && tools.length === 0) await requireServer(clientFor(values, io), values.server);
    if (values.json) {
      writeRaw(io, res.text);
      return 0;
    }
    io.stdout.write(`${values.search !== undefined ? searchTable(tools) : toolTable(tools)}\n`);
    if (tools.length > 0) io.stdout.write(`\n${plural(tools.length, 'tool')}\n`);
    // A search's neighbourhood map (issue #37): the other likely tools, by server.
    const related = values.search !== undefined ? relatedLines(listOf<RelatedRow>(res.body, 'related')) : '';
    if (related) io.stdout.write(`\n${related}\n`);
    return 0;
  });
}

/** Throws "no server named …" (with the names there are) unless the daemon knows `server`. */
async function requireServer(client: DaemonClient, server: string): Promise<void> {
  try {
    await client.request('GET', `/servers/${encodeURIComponent(server)}`);
  } catch (err) {
    if (!(err instanceof DaemonError) || err.code !== 'SERVER_NOT_FOUND') throw err;
    const names = listOf<ServerRow>((await client.request('GET', '/servers')).body, 'servers').map((s) => s.name);
    const near = nearestNames(
      server,
      names.map((name) => ({ name })),
    );
    const known = names.length === 0 ? 'the daemon has no servers' : `servers: ${names.join(', ')}`;
    throw new DaemonError('SERVER_NOT_FOUND', `no server named "${server}" (${known})`, err.status, near);
  }
}
