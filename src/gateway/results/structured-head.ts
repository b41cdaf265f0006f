import { estimateTokens } from './token-estimate.js';

/** The head of a large `structuredContent`: its shape kept, arrays and strings cut, and what was cut. */
export interface StructuredHead {
  value: unknown;
  /** JSONPath of each array (or string) that was cut → its full length. */
  lengths: Record<string, number>;
}

/** Values at most this big (characters of their JSON) are kept whole beside big ones. */
const SMALL_CHARS = 256;
/** JSON characters per token to cut by first (o200k_base spends about 2.6 on JSON); the head is then measured and cut again if need be. */
const CHARS_PER_TOKEN = 2.2;

/**
 * The characters of `JSON.stringify(value)` (escapes aside), counted only up to `limit`: past it
 * the walk stops and answers `limit + 1`, so a small result costs little and a big one no more
 * than `limit`.
 */
export function jsonCharsWithin(value: unknown, limit: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') total += item.length + 2;
    else if (Array.isArray(item)) {
      // Each item is at least a character and a comma: past the limit, the items need not be pushed.
      total += 2 + item.length;
      if (total + item.length > limit) return limit + 1;
      for (let i = item.length - 1; i >= 0; i -= 1) stack.push(item[i]);
    } else if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item);
      total += 2 + entries.length;
      if (total > limit) return limit + 1;
      for (const [key, child] of entries) {
        total += key.length + 3;
        stack.push(child);
      }
    } else total += item === undefined ? 0 : String(item).length;
    if (total > limit) return limit + 1;
  }
  return total;
}

/**
 * The head of `value` within about `tokens`: every key of an object is kept (small values whole,
 * big ones sharing what is left), arrays keep their first items that fit, long strings their
 * start. Kept this way, the head usually still matches the tool's `outputSchema`, which a client
 * may check; `lengths` says what was cut (SPEC §19, issue #38 item 3).
 */
export function structuredHead(value: unknown, tokens: number): StructuredHead {
  let budget = Math.max(0, Math.floor(tokens * CHARS_PER_TOKEN));
  for (let attempt = 0; ; attempt += 1) {
    const lengths: Record<string, number> = {};
    const [head, size] = cut(value, budget, '$', lengths);
    // Uncut, or within the cap as estimated (text of other scripts spends fewer characters per token): done.
    if (size <= budget && Object.keys(lengths).length === 0) return { value: head, lengths };
    const spent = estimateTokens(JSON.stringify(head));
    if (spent <= tokens || attempt === 3 || budget === 0) return { value: head, lengths };
    budget = Math.floor(((budget * tokens) / spent) * 0.95);
  }
}

function cut(value: unknown, budget: number, path: string, lengths: Record<string, number>): [unknown, number] {
  const size = jsonCharsWithin(value, budget);
  if (size <= budget) return [value, size];
  if (typeof value === 'string') {
    const kept = value.slice(0, Math.max(0, budget - 2));
    lengths[path] = value.length;
    return [kept, kept.length + 2];
  }
  if (Array.isArray(value)) return cutArray(value, budget, path, lengths);
  if (value !== null && typeof value === 'object') return cutObject(value as Record<string, unknown>, budget, path, lengths);
  return [value, size];
}

function cutArray(items: unknown[], budget: number, path: string, lengths: Record<string, number>): [unknown[], number] {
  const kept: unknown[] = [];
  let used = 2;
  for (const [index, item] of items.entries()) {
    const left = budget - used - 1;
    if (left <= 0) break;
    const size = jsonCharsWithin(item, left);
    if (size <= left) {
      kept.push(item);
      used += size + 1;
      continue;
    }
    // The first item alone is too big: its head, so the shape still shows.
    if (kept.length === 0) {
      const [head, headSize] = cut(item, left, `${path}[${index}]`, lengths);
      kept.push(head);
      used += headSize + 1;
    }
    break;
  }
  if (kept.length < items.length) lengths[path] = items.length;
  return [kept, used];
}

function cutObject(object: Record<string, unknown>, budget: number, path: string, lengths: Record<string, number>): [Record<string, unknown>, number] {
  const entries = Object.entries(object);
  const out: Record<string, unknown> = {};
  let used = 2;
  const big: Array<[string, unknown]> = [];
  for (const [key, child] of entries) {
    const size = jsonCharsWithin(child, SMALL_CHARS);
    if (size <= SMALL_CHARS) {
      out[key] = child;
      used += key.length + 4 + size;
    } else big.push([key, child]);
  }
  for (const [index, [key, child]] of big.entries()) {
    const share = Math.floor((budget - used) / (big.length - index)) - key.length - 4;
    const [head, size] = cut(child, Math.max(0, share), childPath(path, key), lengths);
    out[key] = head;
    used += key.length + 4 + size;
  }
  // The keys in their original order.
  return [Object.fromEntries(entries.map(([key]) => [key, out[key]])), used];
}

function childPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}
