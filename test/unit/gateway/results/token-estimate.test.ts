import { readFileSync } from 'node:fs';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { estimateTokens, headWithin, MAX_TOKENS_PER_UNIT } from '../../../../src/gateway/results/token-estimate.js';
import { imageData, jsonDocument, logLines, structuredItems } from '../../../fixtures/servers/lib/big-payloads.js';
import { bigText } from '../../../fixtures/servers/lib/big-text.js';

const samples: Record<string, string> = {
  'log lines': logLines(40_000),
  'compact JSON': JSON.stringify(jsonDocument(40_000)),
  'indented JSON': JSON.stringify(jsonDocument(20_000), null, 2),
  'structured JSON': JSON.stringify(structuredItems(800)),
  base64: imageData(20_000),
  'mixed script': bigText(40_000),
  prose: readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8').slice(0, 40_000),
  code: readFileSync(new URL('../../../../src/daemon.ts', import.meta.url), 'utf8'),
  'hex ids': Array.from({ length: 1500 }, (_, i) => ((i * 2654435761) >>> 0).toString(16)).join(' '),
  CJK: '日本語のテキストです。これはテストです。'.repeat(800),
};

describe('the token estimate (no tokenizer at run time)', () => {
  it.each(Object.entries(samples))('counts %s at least as o200k_base does, and at most 1.6 times', (_name, text) => {
    const real = countTokens(text);
    const estimate = estimateTokens(text);
    expect(estimate).toBeGreaterThanOrEqual(real);
    expect(estimate).toBeLessThanOrEqual(real * 1.6);
  });

  it('weighs each kind of run by its rule (letters, digits, mixed, spaces, punctuation, other)', () => {
    // hello 1.25 · " " 0.15 · world 1.25 · "," 0.8 · " " 0.15 · 2026 2 × 1.1 · " " 0.15 · abc123
    // 6 × 0.75 · "\n\n" 1.2 · 日 1 · "\t" 0.15 · Ab 1 (at least one) = 13.95
    expect(estimateTokens('hello world, 2026 abc123\n\n日\tAb')).toBe(14);
    expect(estimateTokens('abcdefghijklmnopqrst')).toBe(5); // a token per 4 letters
    expect(estimateTokens('a.a.a.a.a')).toBe(9); // a run of letters costs at least one: 5 × 1 + 4 × 0.8
    expect(estimateTokens('1234567')).toBe(4); // three groups of digits, 3 × 1.1
    expect(estimateTokens('a1'.repeat(10))).toBe(15); // one mixed run, 0.75 a character
    expect(estimateTokens(`${'x  '.repeat(9)}x`)).toBe(21); // 10 × 1 + 9 × 1.2 for a longer space run
    expect(estimateTokens(' x'.repeat(19))).toBe(22); // 19 × (0.15 for a lone space + 1)
    expect(estimateTokens(`${'~!'.repeat(9)}~`)).toBe(16); // 0.8 each
    expect(estimateTokens('日本語'.repeat(10))).toBe(30); // a token per UTF-16 unit outside ASCII
    expect(estimateTokens('😀'.repeat(5))).toBe(10);
    // A run longer than the budget is cut inside, at its rate per character: 40 letters are 10
    // tokens, so 2.5 tokens hold 10 of them.
    expect(headWithin('x'.repeat(40), 2.5)).toBe(10);
  });

  it('never counts more than MAX_TOKENS_PER_UNIT a unit, so short texts need no counting', () => {
    for (const text of ['1 2 3 4', 'a b c', '!!!', 'é', '0']) expect(estimateTokens(text)).toBeLessThanOrEqual(Math.ceil(text.length * MAX_TOKENS_PER_UNIT));
  });

  it('cuts a head within the budget at a line end, never inside a surrogate pair', () => {
    const text = logLines(100_000);
    const end = headWithin(text, 1_000);
    expect(text[end - 1]).toBe('\n');
    expect(estimateTokens(text.slice(0, end))).toBeLessThanOrEqual(1_000);
    expect(estimateTokens(text.slice(0, end))).toBeGreaterThan(900);
    const emoji = '😀'.repeat(1_000);
    expect(headWithin(emoji, 11) % 2).toBe(0);
    expect(headWithin('short', 1_000)).toBe(5);
  });
});
