import { usageOf } from '../help.js';
import { clientFor, CONNECTION_OPTIONS, helpRequested, parseCommandArgs, runCommand, UsageError, writeRaw, type CommandIo } from './command.js';
import { isRecord, type DaemonResponse } from './daemon-client.js';
import { formatTable } from './table.js';

export const AGENTS_USAGE = usageOf('agents');

const AGENT_OPTIONS = {
  ...CONNECTION_OPTIONS,
  servers: { type: 'string', multiple: true },
  tools: { type: 'string', multiple: true },
  exclude: { type: 'string', multiple: true },
  access: { type: 'string' },
  catalogue: { type: 'string' },
  expires: { type: 'string' },
} as const;

interface AgentRow {
  name: string;
  source?: string;
  status?: string;
  access?: string;
  servers?: string[];
  tools?: string[];
  exclude?: string[];
  expiresAt?: string;
  createdAt?: string;
  revokedAt?: string;
}

const UNITS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * `switchboard agents add|list|show|rotate|revoke` (issue #22), over the operator routes. A new key
 * is printed once, on a line of its own (the last line), and is not kept anywhere in clear.
 */
export function runAgents(io: CommandIo, now: () => number = Date.now): Promise<number> {
  return runCommand(io, AGENTS_USAGE, async () => {
    const { values, positionals } = parseCommandArgs(io.argv, AGENT_OPTIONS);
    if (helpRequested(values, io, 'agents')) return 0;
    const [action, name, extra] = positionals;
    if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
    const client = (): ReturnType<typeof clientFor> => clientFor(values, io);
    const named = (): string => {
      if (name === undefined) throw new UsageError(`missing <name>`);
      return encodeURIComponent(name);
    };
    const settingsFlags = values.servers ?? values.tools ?? values.exclude ?? values.access ?? values.catalogue ?? values.expires;
    if (action !== 'add' && settingsFlags !== undefined) throw new UsageError('--servers, --tools, --exclude, --access, --catalogue and --expires go with "agents add"');
    let res: DaemonResponse;
    switch (action) {
      case 'add': {
        if (name === undefined) throw new UsageError('missing <name>');
        const body = {
          name,
          ...globs('servers', values.servers),
          ...globs('tools', values.tools),
          ...globs('exclude', values.exclude),
          ...(values.access !== undefined ? { access: values.access } : {}),
          ...(values.catalogue !== undefined ? { catalogue: values.catalogue } : {}),
          ...(values.expires !== undefined ? { expiresAt: expiresAt(values.expires, now()) } : {}),
        };
        res = await client().request('POST', '/agents', { body });
        return printKey(io, res, values.json, 'created');
      }
      case 'rotate':
        res = await client().request('POST', `/agents/${named()}/rotate`);
        return printKey(io, res, values.json, 'has a new key; the old one no longer works');
      case 'revoke':
        res = await client().request('DELETE', `/agents/${named()}`);
        if (values.json) writeRaw(io, res.text);
        else io.stdout.write(`agent "${name}" revoked: its keys answer KEY_REVOKED from now on\n`);
        return 0;
      case 'show':
        res = await client().request('GET', `/agents/${named()}`);
        if (values.json) writeRaw(io, res.text);
        else io.stdout.write(`${describe(res.body as AgentRow)}\n`);
        return 0;
      case 'list':
      case undefined:
        res = await client().request('GET', '/agents');
        if (values.json) writeRaw(io, res.text);
        else io.stdout.write(`${agentTable(isRecord(res.body) && Array.isArray(res.body.agents) ? (res.body.agents as AgentRow[]) : [])}\n`);
        return 0;
      default:
        throw new UsageError(`unknown action "${action}" (add, list, show, rotate, revoke)`);
    }
  });
}

/** `--servers a,b --servers c` → `{ servers: [a, b, c] }`. */
function globs(field: string, given: string[] | undefined): Record<string, string[]> {
  if (given === undefined) return {};
  return {
    [field]: given
      .flatMap((value) => value.split(','))
      .map((glob) => glob.trim())
      .filter((glob) => glob !== ''),
  };
}

/** `30d`, `12h`, `90m`, `2w` from now, or an ISO date as it is. */
export function expiresAt(text: string, now: number): string {
  const match = /^(\d+)([mhdw])$/.exec(text.trim());
  if (match) return new Date(now + Number(match[1]) * (UNITS[match[2] as string] ?? 0)).toISOString();
  if (!Number.isNaN(Date.parse(text))) return text;
  throw new UsageError(`invalid --expires "${text}": use 30d, 12h, 90m, 2w or an ISO date`);
}

function printKey(io: CommandIo, res: DaemonResponse, json: boolean | undefined, what: string): number {
  if (json) {
    writeRaw(io, res.text);
    return 0;
  }
  const body = isRecord(res.body) ? res.body : {};
  const agent = isRecord(body.agent) ? (body.agent as unknown as AgentRow) : undefined;
  io.stdout.write(`agent "${agent?.name ?? '?'}" ${what}. Its key is shown this once; keep it now:\n${String(body.key)}\n`);
  // The first key changes who needs one (issue #36 item 5): said on stderr, so stdout's last line stays the key.
  if (isRecord(body.firstKey) && typeof body.firstKey.message === 'string') io.stderr.write(`switchboard: ${body.firstKey.message}\n`);
  return 0;
}

function agentTable(agents: readonly AgentRow[]): string {
  if (agents.length === 0) return 'No agents.';
  return formatTable(agents, [
    { header: 'NAME', value: (a) => a.name },
    { header: 'SOURCE', value: (a) => a.source },
    { header: 'STATUS', value: (a) => a.status },
    { header: 'ACCESS', value: (a) => a.access ?? 'all' },
    { header: 'SERVERS', value: (a) => (a.servers ?? ['*']).join(','), maxWidth: 40 },
    { header: 'TOOLS', value: (a) => (a.tools ?? ['*']).join(','), maxWidth: 40 },
    { header: 'EXPIRES', value: (a) => a.expiresAt ?? 'never' },
  ]);
}

function describe(agent: AgentRow): string {
  const rows: Array<[string, string | undefined]> = [
    ['name', agent.name],
    ['source', agent.source],
    ['status', agent.status],
    ['access', agent.access ?? 'all'],
    ['servers', (agent.servers ?? ['*']).join(', ')],
    ['tools', (agent.tools ?? ['*']).join(', ')],
    ['exclude', agent.exclude?.join(', ')],
    ['expires', agent.expiresAt ?? 'never'],
    ['created', agent.createdAt],
    ['revoked', agent.revokedAt],
  ];
  return rows
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([label, value]) => `${`${label}:`.padEnd(9)} ${value}`)
    .join('\n');
}
