import { isRecord, type DaemonClient, type DaemonResponse } from './daemon-client.js';
import { isKeyValueForm, parseKeyValueArguments, parseToolArguments } from './call-arguments.js';
import { clientFor, CONNECTION_OPTIONS, helpRequested, parseCommandArgs, runCommand, UsageError, writeRaw, type CommandIo } from './command.js';
import { usageOf } from '../help.js';
import { parseProgress, ProgressLine } from './progress-line.js';

export const CALL_USAGE = usageOf('call');

const CALL_OPTIONS = {
  ...CONNECTION_OPTIONS,
  timeout: { type: 'string' },
} as const;

/** How long the CLI waits beyond the call's own `--timeout` for the daemon to answer. */
const ANSWER_MARGIN_MS = 5_000;

interface ContentItem {
  type?: string;
  text?: string;
  mimeType?: string;
  data?: string;
  uri?: string;
  resource?: { uri?: string; text?: string; mimeType?: string };
}

/**
 * `switchboard call <tool> [json-args | key=value…]`: prints the tool's text content, then its
 * structuredContent as JSON when present. Exit 1 when the result is an error. When stderr is a
 * terminal, the server's progress is shown there as one updating line while the call runs.
 */
export function runCall(io: CommandIo): Promise<number> {
  return runCommand(io, CALL_USAGE, async () => {
    const { values, positionals } = parseCommandArgs(io.argv, CALL_OPTIONS);
    if (helpRequested(values, io, 'call')) return 0;
    const [tool, ...words] = positionals;
    if (!tool) throw new UsageError('missing <tool>');
    const keyValue = isKeyValueForm(words);
    if (!keyValue && words.length > 1) throw new UsageError(`unexpected argument "${words[1]}" (quote the JSON arguments, or give key=value pairs)`);
    const timeoutMs = values.timeout === undefined ? undefined : parseTimeout(values.timeout);

    const client = clientFor(values, io);
    const path = `/tools/${encodeURIComponent(tool)}/call`;
    // key=value pairs are typed by the tool's input schema, so the tool is looked up first (an
    // unknown name is then answered there, with the same suggestions).
    const args = keyValue ? parseKeyValueArguments(words, await inputSchemaOf(client, tool)) : parseToolArguments(words[0]);
    const request = {
      body: { arguments: args, ...(timeoutMs !== undefined ? { timeoutMs } : {}) },
      // Without --timeout the daemon bounds the call with the server's callTimeout, which
      // progress keeps resetting, so a fixed deadline here would cut legitimate long calls.
      timeoutMs: timeoutMs === undefined ? 0 : timeoutMs + ANSWER_MARGIN_MS,
    };
    // On a terminal, ask for the call as a stream and show its progress as one live line on
    // stderr; anything else (a pipe, a file, CI) gets the plain JSON answer, output unchanged.
    let res: DaemonResponse;
    const line = io.stderr.isTTY === true ? new ProgressLine(io.stderr) : undefined;
    try {
      res = line
        ? await client.stream('POST', path, {
            ...request,
            onEvent: (event) => {
              const progress = event.event === 'progress' ? parseProgress(event.data) : undefined;
              if (progress) line.update(progress);
            },
          })
        : await client.request('POST', path, request);
    } finally {
      line?.clear();
    }
    const result = isRecord(res.body) && !('content' in res.body) && isRecord(res.body.result) ? res.body.result : res.body;
    const isError = isRecord(result) && result.isError === true;
    if (values.json) {
      writeRaw(io, res.text);
    } else {
      const text = renderCallResult(result);
      if (text) (isError ? io.stderr : io.stdout).write(`${text}\n`);
    }
    return isError ? 1 : 0;
  });
}

async function inputSchemaOf(client: DaemonClient, tool: string): Promise<unknown> {
  const res = await client.request('GET', `/tools/${encodeURIComponent(tool)}`);
  return isRecord(res.body) ? res.body.inputSchema : undefined;
}

function parseTimeout(raw: string): number {
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms <= 0) throw new UsageError(`invalid --timeout "${raw}": expected a positive number of milliseconds`);
  return ms;
}

/** Text content as is, other content as a one-line placeholder, structuredContent as JSON. */
export function renderCallResult(result: unknown): string {
  if (!isRecord(result)) return JSON.stringify(result, null, 2);
  const content = Array.isArray(result.content) ? (result.content as ContentItem[]) : [];
  const parts = content.map(renderContent);
  if (result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent, null, 2));
  return parts.join('\n');
}

function renderContent(item: ContentItem): string {
  switch (item.type) {
    case 'text':
      return item.text ?? '';
    case 'image':
    case 'audio':
      return `[${item.type} ${item.mimeType ?? ''}, ${base64Bytes(item.data)} bytes]`;
    case 'resource':
      return item.resource?.text ?? `[resource ${item.resource?.uri ?? ''}]`;
    case 'resource_link':
      return `[resource link ${item.uri ?? ''}]`;
    default:
      return JSON.stringify(item);
  }
}

function base64Bytes(data: string | undefined): number {
  return data ? Buffer.byteLength(data, 'base64') : 0;
}
