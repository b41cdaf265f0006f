import type { AuditEntry } from '../../store/ports.js';
import { usageOf } from '../help.js';
import { clientFor, CONNECTION_OPTIONS, EXIT_FAILURE, helpRequested, parseCommandArgs, runCommand, UsageError, writeRaw, type CommandIo } from './command.js';
import { isRecord } from './daemon-client.js';
import { interruptSignal, openFeed } from './logs.js';

export const AUDIT_USAGE = usageOf('audit');

const AUDIT_OPTIONS = {
  ...CONNECTION_OPTIONS,
  agent: { type: 'string' },
  server: { type: 'string' },
  tool: { type: 'string' },
  outcome: { type: 'string' },
  since: { type: 'string' },
  limit: { type: 'string', short: 'n' },
  follow: { type: 'boolean', short: 'f' },
} as const;

/** Close code the daemon uses when it shuts down: following ends normally then. */
const GOING_AWAY = 1001;

/**
 * The fields a line shows, from a `GET /audit` entry or a `call.finished` event: the store's
 * entry on the wire, its `ts` as the ISO `time` the route answers with.
 */
type AuditLine = Pick<AuditEntry, 'agent' | 'transport' | 'server' | 'name' | 'outcome' | 'code' | 'durationMs' | 'argBytes' | 'resultBytes'> & {
  time: string;
};

/**
 * `switchboard audit [--agent A] [--server S] [--tool T] [--outcome O] [--since TIME] [-n N] [--follow]`:
 * the newest audit entries (`GET /audit`), oldest first; with `--follow`, then every new one
 * from the `call.finished` events of `/events` until Ctrl-C (or `io.signal`).
 */
export function runAudit(io: CommandIo & { signal?: AbortSignal }): Promise<number> {
  return runCommand(io, AUDIT_USAGE, async () => {
    const { values, positionals } = parseCommandArgs(io.argv, AUDIT_OPTIONS);
    if (helpRequested(values, io, 'audit')) return 0;
    if (positionals[0] !== undefined) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const filters = { agent: values.agent, server: values.server, tool: values.tool, outcome: values.outcome };
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries({ ...filters, since: values.since, limit: values.limit })) {
      if (value !== undefined) query.set(key, value);
    }
    const client = clientFor(values, io);
    const feed = values.follow ? await openFeed(client.url, values.token ?? io.env.SWITCHBOARD_TOKEN) : undefined;
    try {
      // With --follow the feed is open first, so no entry falls between the history and the live ones.
      const res = await client.request('GET', `/audit${query.size > 0 ? `?${query}` : ''}`);
      if (values.json && !feed) {
        writeRaw(io, res.text);
        return 0;
      }
      const entries = isRecord(res.body) && Array.isArray(res.body.entries) ? (res.body.entries as AuditLine[]) : [];
      for (const entry of entries.reverse()) io.stdout.write(`${auditLine(entry)}\n`);
      if (!feed) return 0;
      const matches = (event: Record<string, unknown>): boolean =>
        event.type === 'call.finished' &&
        (filters.agent === undefined || event.agent === filters.agent) &&
        (filters.server === undefined || event.server === filters.server) &&
        (filters.tool === undefined || event.name === filters.tool) &&
        (filters.outcome === undefined || event.outcome === filters.outcome);
      const end = await feed.run((event) => {
        if (!matches(event)) return;
        const line = { ...(event as unknown as AuditLine), time: String(event.ts) };
        io.stdout.write(`${values.json ? JSON.stringify(event) : auditLine(line)}\n`);
      }, io.signal ?? interruptSignal());
      if (end === undefined) return 0;
      io.stderr.write(`switchboard: the daemon closed the event feed (${`${end.code} ${end.reason}`.trim()})\n`);
      return end.code === GOING_AWAY ? 0 : EXIT_FAILURE;
    } finally {
      feed?.close();
    }
  });
}

/** `2026-12-03T19:04:32.113Z  ci-bot  mcp  echo  mcp_echo_echo  ok  3.2 ms  14 B → 40 B` */
export function auditLine(entry: AuditLine): string {
  const outcome = entry.code ? `${entry.outcome} ${entry.code}` : entry.outcome;
  return [
    entry.time,
    entry.agent ?? '-',
    entry.transport,
    entry.server || '-',
    entry.name,
    outcome,
    `${entry.durationMs.toFixed(1)} ms`,
    `${entry.argBytes} B → ${entry.resultBytes} B`,
  ].join('  ');
}
