import { jsonCharsWithin, structuredHead } from './structured-head.js';
import { approximateTokens, estimateTokens, headWithin, MAX_TOKENS_PER_UNIT } from './token-estimate.js';

/** Where a cut result says so, in `_meta` (beside `switchboard/error`). */
export const TRUNCATED_META_KEY = 'switchboard/truncated';

/** What REST's `truncated` field and `_meta[TRUNCATED_META_KEY]` say of a cut result. */
export interface Truncation {
  handle: string;
  totalTokens: number;
  shownTokens: number;
}

/** How the note tells the agent to read more: the `read_result` meta-tool (`/mcp`) or `GET /results/:handle` (REST). */
export type ReadHint = 'meta-tool' | 'rest';

/** Tokens kept back for the note, so the result with its note stays within the cap. */
const NOTE_TOKENS = 400;

type Item = Record<string, unknown>;

/**
 * Whether `result` is within `cap` tokens for sure, cheaply: its strings' UTF-16 lengths (at most
 * `MAX_TOKENS_PER_UNIT` tokens each, token-estimate.ts) and its `structuredContent`'s size, counted
 * only up to the cap. A small result is answered by this check alone, untouched (issue #38).
 */
export function surelyWithin(result: Record<string, unknown>, cap: number): boolean {
  const units = Math.floor(cap / MAX_TOKENS_PER_UNIT);
  let used = 0;
  const content = Array.isArray(result.content) ? (result.content as Item[]) : [];
  for (const item of content) {
    used += unitsOf(item);
    if (used > units) return false;
  }
  if (result.structuredContent !== undefined) used += jsonCharsWithin(result.structuredContent, units - used);
  return used <= units;
}

/** The estimated tokens of a whole result: its content items and its `structuredContent` (sampled above 1 MiB of text). */
export function resultTokens(result: Record<string, unknown>): number {
  const content = Array.isArray(result.content) ? (result.content as Item[]) : [];
  let tokens = 0;
  for (const item of content) tokens += itemTokens(item, approximateTokens);
  if (result.structuredContent !== undefined) tokens += approximateTokens(JSON.stringify(result.structuredContent));
  return tokens;
}

/**
 * The result as an agent with `cap` tokens gets it (SPEC §19, issue #38 items 1 and 3): the head
 * of its text within the cap, cut at a line end; whole content items that fit; images, audio and
 * embedded blobs that do not, replaced by a reference; the head of a large `structuredContent`;
 * and one note — how much was cut, the handle, how to read more. `isError`, `_meta` (with the
 * truncation added) and the other fields are kept.
 */
export function cutResult(
  result: Record<string, unknown>,
  cap: number,
  truncation: Omit<Truncation, 'shownTokens'>,
  hint: ReadHint,
  ttlMs: number,
): { result: Record<string, unknown>; truncation: Truncation } {
  let left = Math.max(0, cap - NOTE_TOKENS);
  const out: Record<string, unknown> = { ...result };
  let lengths: Record<string, number> | undefined;
  if (result.structuredContent !== undefined) {
    const hasText = Array.isArray(result.content) && (result.content as Item[]).some((item) => item.type === 'text');
    const head = structuredHead(result.structuredContent, hasText ? Math.floor(left / 2) : left);
    out.structuredContent = head.value;
    if (Object.keys(head.lengths).length > 0) lengths = head.lengths;
    left -= estimateTokens(JSON.stringify(head.value));
  }
  const content: Item[] = [];
  let textCut = false;
  let next: number | undefined;
  let position = 0;
  let omitted = 0;
  for (const [index, item] of (Array.isArray(result.content) ? (result.content as Item[]) : []).entries()) {
    if (item.type === 'text' && typeof item.text === 'string') {
      const text = item.text;
      // Only the head that fits is walked: a 5 MB text costs what its first 25 000 tokens cost.
      const end = textCut ? 0 : headWithin(text, left);
      if (!textCut && end === text.length) {
        content.push(item);
        left -= estimateTokens(text);
      } else if (!textCut) {
        content.push({ ...item, text: text.slice(0, end) });
        left -= estimateTokens(text.slice(0, end));
        next = position + end;
        textCut = true;
      } else omitted += 1;
      position += text.length + 1;
      continue;
    }
    const tokens = itemTokens(item, estimateTokens);
    if (tokens <= left) {
      content.push(item);
      left -= tokens;
    } else {
      content.push({ type: 'text', text: reference(item, index, truncation.handle, hint) });
      omitted += 1;
    }
  }
  const shownBeforeNote = cap - NOTE_TOKENS - left;
  const note = noteOf({ ...truncation, shownTokens: shownBeforeNote }, cap, hint, ttlMs, next, omitted, lengths);
  content.push({ type: 'text', text: note });
  out.content = content;
  const shown: Truncation = { ...truncation, shownTokens: shownBeforeNote + estimateTokens(note) };
  const meta = (result._meta as Record<string, unknown> | undefined) ?? {};
  out._meta = { ...meta, [TRUNCATED_META_KEY]: { ...shown, ...(lengths ? { lengths } : {}) } };
  return { result: out, truncation: shown };
}

function unitsOf(item: Item): number {
  switch (item.type) {
    case 'text':
      return typeof item.text === 'string' ? item.text.length : 0;
    case 'image':
    case 'audio':
      return typeof item.data === 'string' ? item.data.length : 0;
    case 'resource': {
      const resource = (item.resource ?? {}) as Item;
      return (typeof resource.text === 'string' ? resource.text.length : 0) + (typeof resource.blob === 'string' ? resource.blob.length : 0) + 64;
    }
    default:
      return jsonCharsWithin(item, 4096);
  }
}

function itemTokens(item: Item, count: (text: string) => number): number {
  switch (item.type) {
    case 'text':
      return typeof item.text === 'string' ? count(item.text) : 0;
    case 'image':
    case 'audio':
      // Base64 is one mixed run: 0.75 of a token per character (token-estimate.ts), without walking megabytes.
      return typeof item.data === 'string' ? Math.ceil(item.data.length * 0.75) : 0;
    default:
      return count(JSON.stringify(item));
  }
}

function reference(item: Item, index: number, handle: string, hint: ReadHint): string {
  const resource = (item.resource ?? {}) as Item;
  const mime = (item.mimeType ?? resource.mimeType ?? 'application/octet-stream') as string;
  const data = (item.data ?? resource.blob ?? resource.text ?? '') as string;
  const bytes = item.type === 'image' || item.type === 'audio' || typeof resource.blob === 'string' ? Math.floor((data.length * 3) / 4) : Buffer.byteLength(data, 'utf8');
  const how = hint === 'rest' ? `GET /results/${handle}?item=${index}` : `read_result {"handle": "${handle}", "item": ${index}}`;
  return `[${String(item.type)} ${mime} of ${sizeText(bytes)} left out: over the result's token cap. It is kept under handle "${handle}"; ${how} pages it.]`;
}

function noteOf(t: Truncation, cap: number, hint: ReadHint, ttlMs: number, next: number | undefined, omitted: number, lengths: Record<string, number> | undefined): string {
  const h = JSON.stringify(t.handle);
  const read =
    hint === 'rest'
      ? `GET /results/${t.handle}?offset=${next ?? 0} for the rest (characters; &length=), ?q=<text> for matching lines, ?path=$.items[0:10] for a slice of its JSON`
      : `read_result {"handle": ${h}${next !== undefined ? `, "offset": ${next}` : ''}} for the rest (characters; add "length"), {"handle": ${h}, "query": "<text>"} for matching lines, {"handle": ${h}, "path": "$.items[0:10]"} for a slice of its JSON`;
  const parts = [
    `[Switchboard cut this result to fit ${cap} tokens: about ${t.totalTokens} tokens in all, ${t.shownTokens} shown`,
    omitted > 0 ? `, ${omitted} content item(s) left out` : '',
    lengths
      ? `; structuredContent cut (full lengths: ${Object.entries(lengths)
          .slice(0, 8)
          .map(([path, n]) => `${path} ${n}`)
          .join(', ')})`
      : '',
    `. The whole result is kept for ${Math.round(ttlMs / 60_000)} min under handle ${h}, for you only. Read more with ${read}.]`,
  ];
  return parts.join('');
}

function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  return bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${bytes} bytes`;
}
