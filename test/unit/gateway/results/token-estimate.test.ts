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
