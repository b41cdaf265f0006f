/**
 * Human-readable log lines for a terminal, from pino's JSON lines:
 *
 *   14:02:07.311 INFO  [echo] connected  tools=3 ms=211
 *
 * A small formatter rather than pino-pretty: it runs in-process and synchronously (no worker
 * thread, so nothing is lost on exit), adds no dependency, and only has to read the fields this
 * daemon writes. Arrays of flat objects (the startup summary) print one indented line per item.
 */

export interface PrettyOptions {
  /** ANSI colours for the level. @default false */
  colors?: boolean;
}

interface Writable {
  write(chunk: string): unknown;
  on?(event: 'error', listener: (err: Error) => void): unknown;
}

const LEVELS: Record<number, { name: string; color: string }> = {
  10: { name: 'TRACE', color: '\x1b[90m' },
  20: { name: 'DEBUG', color: '\x1b[90m' },
  30: { name: 'INFO ', color: '\x1b[32m' },
  40: { name: 'WARN ', color: '\x1b[33m' },
  50: { name: 'ERROR', color: '\x1b[31m' },
  60: { name: 'FATAL', color: '\x1b[35m' },
};
const RESET = '\x1b[0m';
const DIM = '\x1b[2m';
/** Shown elsewhere on the line, or noise on a terminal. */
const HIDDEN = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'server', 'component', 'v']);

/**
 * A pino destination that writes `formatLine` of every line to `out`. Once `out` fails — its reader
 * gone (`serve | head`: EPIPE), its terminal closed (EIO, as the SIGHUP that follows starts the
 * drain) — nothing more is written and nothing is thrown: the daemon goes on serving and stops
 * cleanly without its log, as it does with JSON logs (pino drops them after EPIPE). Unheard, the
 * stream's 'error' was an uncaught exception that ended the daemon mid-call.
 */
export function prettyDestination(out: Writable, options: PrettyOptions = {}): { write(line: string): void } {
  watchForFailure(out);
  return {
    write(line: string) {
      if (!failedOutputs.has(out)) out.write(`${formatLine(line, options)}\n`);
    },
  };
}

/** Outputs that failed, and those listened to: one listener per stream, however many loggers share it. */
const failedOutputs = new WeakSet<Writable>();
const watchedOutputs = new WeakSet<Writable>();

function watchForFailure(out: Writable): void {
  if (!out.on || watchedOutputs.has(out)) return;
  watchedOutputs.add(out);
  out.on('error', () => failedOutputs.add(out));
}

/** One pino JSON line (with or without its newline) as text; anything unparsable passes through. */
export function formatLine(line: string, options: PrettyOptions = {}): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.replace(/\n$/, '');
  }
  const color = options.colors === true;
  const level = LEVELS[Number(entry.level)] ?? { name: String(entry.level).toUpperCase().padEnd(5), color: '' };
  const time = formatTime(entry.time);
  const tag = [entry.component, entry.server].filter((part) => typeof part === 'string' && part !== '').join('/');
  const fields: string[] = [];
  const blocks: string[] = [];
  for (const [key, value] of Object.entries(entry)) {
    if (HIDDEN.has(key) || value === undefined) continue;
    if (isTable(value)) blocks.push(...value.map((row) => `    ${formatRow(row)}`));
    else if (typeof value === 'string' && value.includes('\n')) blocks.push(`    ${key}: ${value.replace(/\n/g, '\n      ')}`);
    else fields.push(`${key}=${formatValue(value)}`);
  }
  const head = [
    color ? `${DIM}${time}${RESET}` : time,
    color ? `${level.color}${level.name}${RESET}` : level.name,
    tag ? `[${tag}]` : undefined,
    typeof entry.msg === 'string' ? entry.msg : undefined,
  ]
    .filter((part) => part !== undefined)
    .join(' ');
  const text = fields.length > 0 ? `${head}  ${color ? DIM : ''}${fields.join(' ')}${color ? RESET : ''}` : head;
  return [indentContinuation(text), ...blocks].join('\n');
}

function formatTime(time: unknown): string {
  const date = typeof time === 'number' || typeof time === 'string' ? new Date(time) : new Date();
  if (Number.isNaN(date.getTime())) return String(time);
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

function isTable(value: unknown): value is Array<Record<string, unknown>> {
  return Array.isArray(value) && value.length > 0 && value.every((row) => typeof row === 'object' && row !== null && !Array.isArray(row));
}

/** `name` first when there is one, then `key=value`. */
function formatRow(row: Record<string, unknown>): string {
  const { name, ...rest } = row;
  const parts = Object.entries(rest)
    .filter(([, value]) => value !== undefined && value !== null)
    .map(([key, value]) => `${key}=${formatValue(value)}`);
  return [typeof name === 'string' ? name : undefined, ...parts].filter(Boolean).join(' ');
}

/** Multi-line messages (an error with the server's stderr) stay readable as one entry. */
function indentContinuation(text: string): string {
  return text.replace(/\n/g, '\n    ');
}
