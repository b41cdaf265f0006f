import { describe, expect, it } from 'vitest';
import { TopK } from '../../../../src/upstream/catalogue/top-k.js';

describe('TopK', () => {
  it('keeps the k best, best first, the first offered winning a tie', () => {
    const top = new TopK<string>(3);
    for (const [score, item] of [
      [1, 'a'],
      [5, 'b'],
      [3, 'c'],
      [5, 'd'],
      [0.5, 'e'],
      [4, 'f'],
      [3, 'g'],
    ] as const)
      top.offer(score, item);
    expect(top.sorted()).toEqual(['b', 'd', 'f']);
    expect(top.floor).toBe(4);
  });

  it('matches a full sort on many random offers', () => {
    let seed = 7;
    const random = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const scores = Array.from({ length: 2_000 }, () => Math.floor(random() * 500));
    const top = new TopK<number>(25);
    scores.forEach((score, i) => top.offer(score, i));
    const expected = scores
      .map((score, i) => ({ score, i }))
      .sort((x, y) => y.score - x.score || x.i - y.i)
      .slice(0, 25)
      .map((e) => e.i);
    expect(top.sorted()).toEqual(expected);
    expect(new TopK<number>(0).sorted()).toEqual([]);
  });
});
