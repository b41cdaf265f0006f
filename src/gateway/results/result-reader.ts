import { SwitchboardError } from '../../errors.js';
import { selectPath } from './json-path.js';
import { structuredHead } from './structured-head.js';
import { estimateTokens, headWithin } from './token-estimate.js';

/** What a read asks of a kept result (`read_result`, `GET /results/:handle`). */
export interface ReadRequest {
  /** First character (UTF-16 unit) of the range. @default 0 */
  offset?: number | undefined;
  /** Characters of the range. @default as many as the read's cap allows */
  length?: number | undefined;
  /** First line (1-based) of a line range, instead of `offset`. */
  line?: number | undefined;
  /** Lines of a line range. @default as many as the cap allows */
  lines?: number | undefined;
  /** The lines containing this text (case-insensitive), with a little context. */
  query?: string | undefined;
  /** A JSONPath subset into `structuredContent`, or into the text when it is JSON. */
  path?: string | undefined;
  /** A content item by its index: its text, or its base64 data/blob, paged by `offset`/`length`. */
  item?: number | undefined;
}

export type ReadAnswer =
  | { kind: 'range'; text: string; offset: number; length: number; total: number; next?: number }
  | { kind: 'query'; query: string; matches: Array<{ line: number; offset: number; text: string }>; more: boolean }
  | { kind: 'path'; path: string; value: unknown; cut?: Record<string, number> };

/** Lines shown before and after each matching line. */
const CONTEXT_LINES = 2;
/** Most matches one query answers. */
const MAX_MATCHES = 50;
/** Tokens a read keeps back for its note. */
const NOTE_TOKENS = 100;

/**
 * Reads part of a kept result within `cap` tokens (the read is guarded too): a character or line
 * range of its text (the text content items joined by newlines: one item reads back exactly), the
 * lines matching a query, or a JSONPath slice. A range asked for beyond the cap ends early and
 * says where to go on (`next`).
 */
export function readKept(result: Record<string, unknown>, read: ReadRequest, cap: number): ReadAnswer {
  const within = Math.max(1, cap - NOTE_TOKENS);
  if (read.path !== undefined) return readPath(result, read.path, within);
  const text = read.item !== undefined ? itemText(result, read.item) : documentOf(result);
  if (read.query !== undefined) return readQuery(text, read.query, within);
  if (read.line !== undefined) return readLines(text, read.line, read.lines, within);
  return readRange(text, read.offset ?? 0, read.length, within);
}

/** The text a range or query reads: the text items joined by newlines, else the JSON of `structuredContent`. */
export function documentOf(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [];
  const texts = content.filter((item) => item.type === 'text' && typeof item.text === 'string').map((item) => item.text as string);
  if (texts.length > 0) return texts.join('\n');
  return result.structuredContent === undefined ? '' : JSON.stringify(result.structuredContent, null, 1);
}

function itemText(result: Record<string, unknown>, index: number): string {
  const content = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [];
  const item = content[index];
  if (!item) throw new SwitchboardError('VALIDATION_FAILED', `item: the result has ${content.length} content items (0 to ${content.length - 1})`);
  const resource = (item.resource ?? {}) as Record<string, unknown>;
  const value = item.text ?? item.data ?? resource.text ?? resource.blob;
  return typeof value === 'string' ? value : JSON.stringify(item);
}

function readRange(text: string, offset: number, length: number | undefined, tokens: number): ReadAnswer {
  if (offset > text.length) throw new SwitchboardError('VALIDATION_FAILED', `offset: the text has ${text.length} characters`);
  const wanted = text.slice(offset, length === undefined ? undefined : offset + length);
  const end = headWithin(wanted, tokens);
  const next = offset + end < text.length ? offset + end : undefined;
  return { kind: 'range', text: wanted.slice(0, end), offset, length: end, total: text.length, ...(next !== undefined ? { next } : {}) };
}

function readLines(text: string, line: number, count: number | undefined, tokens: number): ReadAnswer {
  let start = 0;
  for (let n = 1; n < line; n += 1) {
    const newline = text.indexOf('\n', start);
    if (newline < 0) throw new SwitchboardError('VALIDATION_FAILED', `line: the text has ${n} lines`);
    start = newline + 1;
  }
  let end = text.length;
  if (count !== undefined) {
    end = start;
    for (let n = 0; n < count && end < text.length; n += 1) {
      const newline = text.indexOf('\n', end);
      end = newline < 0 ? text.length : newline + 1;
    }
  }
  return readRange(text, start, end - start, tokens);
}

function readQuery(text: string, query: string, tokens: number): ReadAnswer {
  const needle = query.toLowerCase();
  const lines = text.split('\n');
  const starts: number[] = [];
  let position = 0;
  for (const line of lines) {
    starts.push(position);
    position += line.length + 1;
  }
  const matches: Array<{ line: number; offset: number; text: string }> = [];
  let spent = 0;
  let more = false;
  for (const [index, line] of lines.entries()) {
    if (!line.toLowerCase().includes(needle)) continue;
    const from = Math.max(0, index - CONTEXT_LINES);
    const shown = lines.slice(from, index + CONTEXT_LINES + 1).join('\n');
    const cost = estimateTokens(shown) + 10;
    if (matches.length >= MAX_MATCHES || spent + cost > tokens) {
      more = true;
      break;
    }
    spent += cost;
    matches.push({ line: index + 1, offset: starts[index] as number, text: shown });
  }
  return { kind: 'query', query, matches, more };
}

function readPath(result: Record<string, unknown>, path: string, tokens: number): ReadAnswer {
  let root = result.structuredContent;
  if (root === undefined) {
    try {
      root = JSON.parse(documentOf(result)) as unknown;
    } catch {
      throw new SwitchboardError('VALIDATION_FAILED', 'path: this result has no structuredContent and its text is not JSON; read it by offset or query');
    }
  }
  const { value } = selectPath(root, path);
  const head = structuredHead(value, tokens);
  return { kind: 'path', path, value: head.value, ...(Object.keys(head.lengths).length > 0 ? { cut: head.lengths } : {}) };
}

/**
 * A read answer as a tool result (`read_result`): the part itself as the first text item, so the
 * pages of a range concatenate to the original, then a short note saying where the next starts.
 */
export function readAnswerResult(handle: string, answer: ReadAnswer): Record<string, unknown> {
  if (answer.kind === 'range') {
    const end = answer.offset + answer.length;
    const where = `[characters ${answer.offset} to ${end} of ${answer.total}; ${answer.next !== undefined ? `next: read_result {"handle": "${handle}", "offset": ${answer.next}}` : 'the end'}]`;
    return {
      content: [
        { type: 'text', text: answer.text },
        { type: 'text', text: where },
      ],
    };
  }
  if (answer.kind === 'query') {
    const text = answer.matches.length === 0 ? `No line contains "${answer.query}".` : answer.matches.map((m) => `line ${m.line} (offset ${m.offset}):\n${m.text}`).join('\n---\n');
    return { content: [{ type: 'text', text: answer.more ? `${text}\n[more matches not shown: narrow the query]` : text }] };
  }
  const cut = answer.cut
    ? `\n[cut to fit; full lengths: ${Object.entries(answer.cut)
        .map(([path, n]) => `${path} ${n}`)
        .join(', ')}]`
    : '';
  return { content: [{ type: 'text', text: JSON.stringify(answer.value) + cut }] };
}
