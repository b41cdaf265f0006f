import { usageOf } from '../help.js';
import { isRecord } from './daemon-client.js';
import { clientFor, CONNECTION_OPTIONS, helpRequested, parseCommandArgs, runCommand, UsageError, writeRaw, type CommandIo } from './command.js';
import { formatTable } from './table.js';
import { listOf, plural } from './views.js';

export const APPROVALS_USAGE = usageOf('approvals');

/** A pending approval as `GET /approvals` lists it. */
interface ApprovalRow {
  id?: string;
  server?: string;
  name?: string;
  agent?: string;
  arguments?: unknown;
  argumentsDigest?: string;
  rule?: string;
  expiresAt?: string;
  /** In a cluster: the replica holding the call. */
  replica?: string;
}

/** `--for`: `90m`, `1h`, `7d`. */
const FOR_UNITS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--for 1h` → milliseconds ("the same call for a while", issue #40 item 3). */
export function forMsOf(text: string): number {
  const match = /^(\d+)([mhd])$/.exec(text.trim());
  const ms = match ? Number(match[1]) * (FOR_UNITS[match[2] as string] ?? 0) : 0;
  if (ms <= 0) throw new UsageError(`invalid --for "${text}": use 90m, 1h or 7d`);
  return ms;
}

/** `switchboard approvals`: the calls waiting for an operator, with their arguments. */
export function runApprovals(io: CommandIo): Promise<number> {
  return runCommand(io, APPROVALS_USAGE, async () => {
    const { values, positionals } = parseCommandArgs(io.argv, CONNECTION_OPTIONS);
    if (helpRequested(values, io, 'approvals')) return 0;
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const res = await clientFor(values, io).request('GET', '/approvals');
    if (values.json) {
      writeRaw(io, res.text);
      return 0;
    }
    const rows = listOf<ApprovalRow>(res.body, 'approvals');
    const unanswered = unansweredOf(res.body);
    if (rows.length === 0) {
      io.stdout.write('No calls are waiting for approval.\n');
      io.stderr.write(unanswered);
      return 0;
    }
    // A lone daemon's rows name no replica: the column shows only in a cluster.
    const replicaColumn = rows.some((row) => row.replica !== undefined) ? [{ header: 'REPLICA', value: (row: ApprovalRow) => row.replica }] : [];
    const table = formatTable(rows, [
      { header: 'ID', value: (row) => row.id },
      { header: 'TOOL', value: (row) => row.name },
      { header: 'SERVER', value: (row) => row.server },
      { header: 'AGENT', value: (row) => row.agent },
      ...replicaColumn,
      { header: 'EXPIRES', value: (row) => row.expiresAt },
      { header: 'RULE', value: (row) => row.rule },
      // Without argument audit only the digest is shown (the approval is bound to it).
      { header: 'ARGUMENTS', value: (row) => (row.arguments !== undefined ? JSON.stringify(row.arguments) : `sha256:${row.argumentsDigest?.slice(0, 12) ?? '?'}…`), maxWidth: 80 },
    ]);
    io.stdout.write(`${table}\n\n${plural(rows.length, 'call')} waiting\n`);
    io.stderr.write(unanswered);
    return 0;
  });
}

/** The warning naming the replicas that did not answer (their held calls are missing), or ''. */
function unansweredOf(body: unknown): string {
  const ids = isRecord(body) && Array.isArray(body.unansweredReplicas) ? body.unansweredReplicas.filter((id): id is string => typeof id === 'string') : [];
  return ids.length > 0 ? `warning: not listed are the calls held on ${plural(ids.length, 'replica')} that did not answer (${ids.join(', ')})\n` : '';
}

/** `switchboard approve <id>`: the held call goes ahead. */
export function runApprove(io: CommandIo): Promise<number> {
  return decide(io, 'approve');
}

/** `switchboard deny <id>`: the held call fails with `APPROVAL_DENIED`. */
export function runDeny(io: CommandIo): Promise<number> {
  return decide(io, 'deny');
}

const APPROVE_OPTIONS = { ...CONNECTION_OPTIONS, for: { type: 'string' } } as const;

function decide(io: CommandIo, verb: 'approve' | 'deny'): Promise<number> {
  return runCommand(io, usageOf(verb), async () => {
    const { values, positionals } = parseCommandArgs(io.argv, verb === 'approve' ? APPROVE_OPTIONS : CONNECTION_OPTIONS);
    if (helpRequested(values, io, verb)) return 0;
    const [id, extra] = positionals;
    if (id === undefined) throw new UsageError('missing <id> (see switchboard approvals)');
    if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
    const forText = 'for' in values && typeof values.for === 'string' ? values.for : undefined;
    const body = forText !== undefined ? { body: { forMs: forMsOf(forText) } } : {};
    const res = await clientFor(values, io).request('POST', `/approvals/${encodeURIComponent(id)}/${verb}`, body);
    if (values.json) {
      writeRaw(io, res.text);
      return 0;
    }
    const approval = isRecord(res.body) && isRecord(res.body.approval) ? res.body.approval : {};
    const tool = typeof approval.name === 'string' ? approval.name : id;
    const until = typeof approval.until === 'string' ? `; the same call until ${approval.until}` : '';
    io.stdout.write(`${verb === 'approve' ? 'approved' : 'denied'} ${tool} (${id})${until}\n`);
    return 0;
  });
}
