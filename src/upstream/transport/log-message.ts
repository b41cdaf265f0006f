import type { LoggingMessageNotification } from '@modelcontextprotocol/client';

/** The longest log message kept; the ring clips lines too, this keeps a huge `data` from being serialised. */
const MAX_DATA_CHARS = 4_096;

/**
 * An MCP log message (`notifications/message`) as one line of the server's log ring:
 * `[log warning] db: connection lost`. `data` is any JSON value; strings are shown as they are.
 */
export function formatLogMessage(params: LoggingMessageNotification['params']): string {
  const { level, logger, data } = params;
  let text = typeof data === 'string' ? data : (JSON.stringify(data) ?? String(data));
  if (text.length > MAX_DATA_CHARS) text = `${text.slice(0, MAX_DATA_CHARS)}…`;
  return `[log ${level}] ${logger ? `${logger}: ` : ''}${text}`;
}

/** One log message as `GET /servers/:name` shows it. */
export interface LoggedMessage {
  at: string;
  level: string;
  logger?: string;
  data: unknown;
}

/** How many log messages each server keeps. @default 100 */
export const LOG_MESSAGES_KEPT = 100;

/**
 * The last log messages (`notifications/message`) a server sent, as it sent them: the structured
 * twin of the `[log …]` lines in the stderr ring, for clients that want level and data apart.
 */
export class LogMessageRing {
  readonly #messages: LoggedMessage[] = [];

  constructor(
    private readonly capacity = LOG_MESSAGES_KEPT,
    private readonly now: () => number = Date.now,
  ) {}

  push(params: Record<string, unknown>): void {
    const { level, logger, data } = params;
    let kept = data;
    const text = typeof data === 'string' ? data : JSON.stringify(data);
    if (text !== undefined && text.length > MAX_DATA_CHARS) kept = `${text.slice(0, MAX_DATA_CHARS)}…`;
    this.#messages.push({
      at: new Date(this.now()).toISOString(),
      level: typeof level === 'string' ? level : 'info',
      ...(typeof logger === 'string' ? { logger } : {}),
      data: kept,
    });
    if (this.#messages.length > this.capacity) this.#messages.shift();
  }

  list(): LoggedMessage[] {
    return [...this.#messages];
  }
}
