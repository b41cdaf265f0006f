/**
 * How many tokens a text costs an agent, approximated without a tokenizer (issue #38; no
 * tokenizer is a dependency of the daemon). One pass over the text by runs of characters, each
 * kind weighed as o200k_base (GPT-4o's) and cl100k split them:
 *
 * - a run of letters: a token per 4 letters (at least one);
 * - a run of digits: a token per 3 digits (both tokenizers group digits by three), plus a tenth;
 * - a run mixing letters and digits (hex, base64, ids): 0.75 of a token per character;
 * - punctuation and symbols: 0.8 of a token each; a lone space or newline 0.15, a longer run 1.2;
 * - any other character (accents, CJK, emoji halves): a token each.
 *
 * Measured against o200k_base (bench/b13-result-guard.ts, BENCHMARKS.md B13), it counts 1.0–1.5×
 * the real tokens of log lines, JSON (compact and indented), prose, code, base64, hex, UUIDs and
 * CJK text: a result shown "within 25 000 tokens" is within them for the model too. Never more
 * than `MAX_TOKENS_PER_UNIT` per UTF-16 unit, so a short text needs no counting at all.
 */
export const MAX_TOKENS_PER_UNIT = 1.1;

const LETTER = 1;
const DIGIT = 2;
const SPACE = 3;
const PUNCT = 4;
const OTHER = 5;

/** Each ASCII code's kind, looked up rather than computed: the walk visits every character. */
const ASCII_KINDS = new Uint8Array(128).fill(PUNCT);
for (let code = 0; code < 128; code += 1) {
  if ((code >= 97 && code <= 122) || (code >= 65 && code <= 90)) ASCII_KINDS[code] = LETTER;
  else if (code >= 48 && code <= 57) ASCII_KINDS[code] = DIGIT;
  else if (code === 32 || code === 10 || code === 9 || code === 13) ASCII_KINDS[code] = SPACE;
}

/**
 * Walks `text` from `start`, adding each run's tokens, and stops before the run that would pass
 * `limit`: returns where it stopped and the tokens up to there. A run longer than what is left is
 * cut inside (a word split in two costs about what it did whole).
 */
function walk(text: string, start: number, limit: number): { end: number; tokens: number } {
  const kinds = ASCII_KINDS;
  let tokens = 0;
  let i = start;
  const n = text.length;
  while (i < n) {
    const code = text.charCodeAt(i);
    const kind = code < 128 ? kinds[code]! : OTHER;
    let cost: number;
    let j = i + 1;
    if (kind === LETTER || kind === DIGIT) {
      // A run of letters and digits: only how many of each matters.
      let digits = kind === DIGIT ? 1 : 0;
      for (; j < n; j += 1) {
        const next = text.charCodeAt(j);
        if (next >= 128) break;
        const nextKind = kinds[next];
        if (nextKind === DIGIT) digits += 1;
        else if (nextKind !== LETTER) break;
      }
      const length = j - i;
      const letters = length - digits;
      cost = letters > 0 && digits > 0 ? length * 0.75 : digits > 0 ? Math.ceil(length / 3) * 1.1 : Math.max(1, length / 4);
      if (tokens + cost > limit) {
        // The part of the run that fits, at the run's rate per character.
        const fits = Math.floor(((limit - tokens) / cost) * length);
        return { end: i + Math.max(0, fits), tokens: tokens + (fits / length) * cost };
      }
    } else if (kind === SPACE) {
      for (; j < n; j += 1) {
        const next = text.charCodeAt(j);
        if (next >= 128 || kinds[next] !== SPACE) break;
      }
      cost = j - i === 1 ? 0.15 : 1.2;
    } else cost = kind === PUNCT ? 0.8 : 1;
    if (tokens + cost > limit) return { end: i, tokens };
    tokens += cost;
    i = j;
  }
  return { end: n, tokens };
}

/** The estimated tokens of `text`. */
export function estimateTokens(text: string): number {
  return Math.ceil(walk(text, 0, Number.POSITIVE_INFINITY).tokens);
}

/** Texts longer than this are counted from samples (`approximateTokens`). */
const SAMPLED_ABOVE = 1024 * 1024;
const SAMPLE = 64 * 1024;

/**
 * About the estimated tokens of `text`, for a total the agent is told ("about 2 168 003 tokens
 * in all"): exact up to 1 MiB; above, eight samples of 64 KiB spread over the text, scaled to its
 * length — a 5 MB result is counted in a few ms instead of walking all of it.
 */
export function approximateTokens(text: string): number {
  if (text.length <= SAMPLED_ABOVE) return estimateTokens(text);
  let tokens = 0;
  const step = Math.floor((text.length - SAMPLE) / 7);
  for (let i = 0; i < 8; i += 1) tokens += walk(text.slice(i * step, i * step + SAMPLE), 0, Number.POSITIVE_INFINITY).tokens;
  return Math.ceil((tokens / (8 * SAMPLE)) * text.length);
}

/**
 * The longest head of `text` (in UTF-16 units) within `tokens`, cut at the last line end within
 * it when there is one in its second half (else where the budget ran out, never inside a
 * surrogate pair).
 */
export function headWithin(text: string, tokens: number): number {
  if (tokens <= 0) return 0;
  if (text.length * MAX_TOKENS_PER_UNIT <= tokens) return text.length;
  const { end } = walk(text, 0, tokens);
  if (end >= text.length) return text.length;
  const newline = text.lastIndexOf('\n', end - 1);
  if (newline >= end / 2) return newline + 1;
  const code = text.charCodeAt(end - 1);
  return code >= 0xd800 && code <= 0xdbff ? end - 1 : end;
}
