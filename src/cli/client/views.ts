import { oneLine } from '../context.js';
import { isRecord } from './daemon-client.js';
import { formatTable } from './table.js';

/**
 * Text views of the daemon's JSON. They read fields defensively: the CLI must keep printing
 * something useful when the daemon is newer than the CLI and adds or renames a field.
 */

export interface ServerRow {
  name: string;
  status?: string;
  transport?: string;
  toolCount?: number;
  /** Tools held because their definition changed (issue #22 pinning). */
  heldToolCount?: number;
  deferred?: boolean;
  stale?: boolean;
  lastError?: { code: string; message: string } | null;
  protocol?: { era?: string; version?: string | null } | null;
  source?: { providerName?: string; path?: string; level?: string };
}

export interface ToolRow {
  name: string;
  server?: string;
  description?: string;
  deferred?: boolean;
  stale?: boolean;
  /** A search hit's relevance (`GET /tools/search`). */
  score?: number;
}

/** The list under `key` of an object body, or the body itself when it is a list. */
export function listOf<T>(body: unknown, key: string): T[] {
  if (Array.isArray(body)) return body as T[];
  if (isRecord(body) && Array.isArray(body[key])) return body[key] as T[];
  return [];
}

export function serverTable(servers: readonly ServerRow[]): string {
  if (servers.length === 0) return 'No servers.';
  return formatTable(servers, [
    { header: 'NAME', value: (s) => s.name },
    { header: 'STATUS', value: (s) => statusLabel(s) },
    { header: 'TRANSPORT', value: (s) => s.transport },
    { header: 'PROTOCOL', value: (s) => (s.protocol ? `${s.protocol.version ?? '?'} (${s.protocol.era ?? '?'})` : '') },
    { header: 'TOOLS', value: (s) => s.toolCount ?? 0, align: 'right' },
    { header: 'SOURCE', value: (s) => s.source?.providerName },
    { header: 'ERROR', value: (s) => errorCell(s), maxWidth: 80 },
  ]);
}

/** The last error, or for a server waiting for a sign-in the one thing to do about it. */
function errorCell(server: ServerRow): string {
  if (server.status === 'needs_auth') return `sign in: switchboard login ${server.name}`;
  return server.lastError ? `${server.lastError.code}: ${server.lastError.message}` : '';
}

/**
 * A `{code, message}` error on one line, `CODE: message`; a bare string (an older daemon) as it
 * is. `firstLine`: only the message's first line (a crash message ends with the stderr tail).
 */
export function errorLine(error: unknown, options: { firstLine?: boolean } = {}): string {
  const message = typeof error === 'string' ? error : isRecord(error) && typeof error.message === 'string' ? error.message : undefined;
  if (message === undefined) return '';
  const text = options.firstLine ? (message.split('\n', 1)[0] ?? '').trim() : oneLine(message);
  return isRecord(error) && typeof error.code === 'string' ? `${error.code}: ${text}` : text;
}

/**
 * The `errors` of a `/status` or `POST /reload` answer (servers that failed, or `.mcp.json` for
 * discovery), as an `Errors:` section; nothing when there are none.
 */
export function loadErrorSection(body: unknown): string[] {
  const errors = listOf<{ path?: unknown; error?: unknown }>(body, 'errors');
  if (errors.length === 0) return [];
  return ['', 'Errors:', ...errors.map((e) => `  ${typeof e.path === 'string' ? e.path : '?'}: ${errorLine(e.error)}`)];
}

export function toolTable(tools: readonly ToolRow[]): string {
  if (tools.length === 0) return 'No tools.';
  return formatTable(tools, [
    { header: 'NAME', value: (t) => t.name + (t.deferred ? ' (deferred)' : t.stale ? ' (stale)' : '') },
    { header: 'SERVER', value: (t) => t.server },
    { header: 'DESCRIPTION', value: (t) => firstLine(t.description), maxWidth: 80 },
  ]);
}

/** Search hits, best first, with their scores. */
export function searchTable(tools: readonly ToolRow[]): string {
  if (tools.length === 0) return 'No matching tools.';
  return formatTable(tools, [
    { header: 'NAME', value: (t) => t.name },
    { header: 'SERVER', value: (t) => t.server },
    { header: 'SCORE', value: (t) => (t.score ?? 0).toFixed(2) },
    { header: 'DESCRIPTION', value: (t) => firstLine(t.description), maxWidth: 80 },
  ]);
}

/** One server of a search answer's neighbourhood map (`related` of `GET /tools/search`). */
export interface RelatedRow {
  server?: string;
  about?: string;
  tools?: Array<{ name?: string; about?: string }>;
  names?: string[];
  more?: number;
}

/**
 * The neighbourhood map under the hits: a line per server with its likeliest tools and a
 * sentence each, then its other tools by name ("git: git_status, git_stash, … and 12 more").
 */
export function relatedLines(related: readonly RelatedRow[]): string {
  const lines: string[] = [];
  for (const group of related) {
    if (typeof group.server !== 'string') continue;
    lines.push(group.about ? `${group.server} — ${oneLine(group.about)}` : `${group.server}:`);
    for (const tool of group.tools ?? []) if (typeof tool.name === 'string') lines.push(`  ${tool.name}  ${oneLine(tool.about ?? '')}`.trimEnd());
    const names = (group.names ?? []).filter((name) => typeof name === 'string');
    const more = typeof group.more === 'number' && group.more > 0 ? `${names.length > 0 ? ' and' : ''} ${group.more} more` : '';
    if (names.length > 0 || more) lines.push(`  ${names.join(', ')}${more}`.trimEnd());
  }
  return lines.length === 0 ? '' : `Related tools:\n${lines.join('\n')}`;
}

/** One line per server after an operation: `name: status, N tools[, error]`. */
export function serverLine(server: ServerRow): string {
  const parts = [statusLabel(server), plural(server.toolCount ?? 0, 'tool')];
  if (server.lastError) parts.push(`error: ${server.lastError.code}: ${oneLine(server.lastError.message)}`);
  return `${server.name}: ${parts.join(', ')}`;
}

export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function statusLabel(server: ServerRow): string {
  const status = server.status ?? 'unknown';
  const held = server.heldToolCount ? ` (${server.heldToolCount} held: switchboard status ${server.name})` : '';
  if (server.deferred) return `${status} (deferred)${held}`;
  if (server.stale) return `${status} (stale)${held}`;
  return status + held;
}

function firstLine(text: string | undefined): string {
  return (text ?? '').trim().split('\n', 1)[0] ?? '';
}
