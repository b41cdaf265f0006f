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
