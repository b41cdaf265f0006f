import { isRecord } from './daemon-client.js';
import { clientFor, CONNECTION_OPTIONS, helpRequested, oneLine, parseCommandArgs, runCommand, UsageError, writeRaw, type CommandIo } from './command.js';
import { usageOf } from '../help.js';
import { listOf, loadErrorSection, plural, serverTable, type ServerRow } from './views.js';
import { renderServerDetail } from './server-detail.js';

export const STATUS_USAGE = usageOf('status');

interface Warning {
  message?: string;
  path?: string;
  line?: number;
  column?: number;
}

/** `switchboard status`: the daemon's state, one row per server, then warnings and errors. */
export function runStatus(io: CommandIo): Promise<number> {
  return runCommand(io, STATUS_USAGE, async () => {
    const { values, positionals } = parseCommandArgs(io.argv, CONNECTION_OPTIONS);
    if (helpRequested(values, io, 'status')) return 0;
    const [server, extra] = positionals;
    if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
    const path = server === undefined ? '/status' : `/servers/${encodeURIComponent(server)}`;
    const res = await clientFor(values, io).request('GET', path);
    if (values.json) writeRaw(io, res.text);
    else io.stdout.write(`${server === undefined ? renderStatus(res.body) : renderServerDetail(res.body)}\n`);
    return 0;
  });
}

export function renderStatus(body: unknown): string {
  const status = isRecord(body) ? body : {};
  const servers = listOf<ServerRow>(status, 'servers');
  const toolCount = countOf(status.tools) ?? countOf(status.toolCount) ?? sum(servers.map((s) => s.toolCount ?? 0));
  const head = [
    `Switchboard${typeof status.version === 'string' ? ` ${status.version}` : ''}`,
    typeof status.state === 'string' ? status.state : undefined,
    plural(servers.length, 'server'),
    plural(toolCount, 'tool'),
  ].filter((part): part is string => part !== undefined);

  const out = [head.join(' · '), '', serverTable(servers)];
  out.push(...loadErrorSection(status));
  const warnings = listOf<Warning>(isRecord(status.discovery) ? status.discovery : status, 'warnings');
  if (warnings.length > 0) {
    out.push('', 'Warnings:', ...warnings.map((w) => `  ${warningLine(w)}`));
  }
  return out.join('\n');
}

/**
 * `path:line:column: message`, the path once: discovery's messages start with their file
 * already (`/home/me/.cursor/mcp.json: server "x": …`), and older ones may not.
 */
function warningLine(w: Warning): string {
  const message = oneLine(w.message ?? '');
  if (!w.path || !message.startsWith(w.path)) return `${location(w)}${message}`;
  return `${location(w)}${message.slice(w.path.length).replace(/^(?::\d+)*:\s*/, '')}`;
}

function location(w: Warning): string {
  if (!w.path) return '';
  const at = [w.path, w.line, w.column].filter((part) => part !== undefined).join(':');
  return `${at}: `;
}

function countOf(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (isRecord(value) && typeof value.count === 'number') return value.count;
  return undefined;
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
