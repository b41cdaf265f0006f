import { describe, expect, it } from 'vitest';
import { structuredHead } from '../../../../src/gateway/results/structured-head.js';
import { estimateTokens } from '../../../../src/gateway/results/token-estimate.js';
import { structuredItems } from '../../../fixtures/servers/lib/big-payloads.js';

describe('the head of a large structuredContent', () => {
  it('keeps every key, the first items of a long array within the cap, and says the full length', () => {
    const { value, lengths } = structuredHead({ ...structuredItems(50_000), tag: 'x' }, 2_000);
    const head = value as { total: number; tag: string; items: unknown[] };
    expect(Object.keys(head)).toEqual(['total', 'items', 'tag']);
    expect(head.total).toBe(50_000);
    expect(head.items[0]).toEqual({ id: 0, name: 'row-0', score: 0 });
    expect(head.items.length).toBeGreaterThan(20);
    expect(lengths).toEqual({ '$.items': 50_000 });
    expect(estimateTokens(JSON.stringify(head))).toBeLessThanOrEqual(2_000);
  });

  it('cuts long strings and nested arrays, naming each path', () => {
    const { value, lengths } = structuredHead({ log: 'x'.repeat(100_000), nested: { 'a b': Array.from({ length: 10_000 }, (_, i) => i) } }, 500);
    expect((value as { log: string }).log.length).toBeLessThan(100_000);
    expect(Object.keys(lengths).sort()).toEqual(['$.log', '$.nested["a b"]']);
    expect(estimateTokens(JSON.stringify(value))).toBeLessThanOrEqual(500);
  });

  it('leaves a small value as it is', () => {
    expect(structuredHead({ ok: true }, 100)).toEqual({ value: { ok: true }, lengths: {} });
  });
});
