import { describe, expect, it } from 'vitest';
import { selectPath } from '../../../../src/gateway/results/json-path.js';

const doc = {
  items: [
    { name: 'a', n: 1 },
    { name: 'b', n: 2 },
    { name: 'c', n: 3 },
  ],
  'odd key': { x: true },
};

describe('JSONPath subset', () => {
  it.each([
    ['$', doc],
    ['$.items[0].name', 'a'],
    ['$.items[-1].n', 3],
    ["$['odd key'].x", true],
    ['$.items[0:2].name', ['a', 'b']],
    ['$.items[1:].n', [2, 3]],
    ['$.items[*].n', [1, 2, 3]],
    ['$.items[0].*', ['a', 1]],
    ['$.missing', undefined],
    ['$.items[9]', undefined],
  ])('%s', (path, value) => {
    expect(selectPath(doc, path).value).toEqual(value);
  });

  it.each(['items', '$.', '$[', '$[?(@.n>1)]', '$..name'])('refuses %s with VALIDATION_FAILED naming the subset', (path) => {
    expect(() => selectPath(doc, path)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', message: expect.stringContaining('supported: $') }));
  });
});
