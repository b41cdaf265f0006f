import { describe, expect, it } from 'vitest';
import { parseCallBody } from '../../../src/http/call-body.js';
import { CallToolBodySchema, NameParamsSchema, parseInput, parseNameParams } from '../../../src/http/schemas.js';
import { MAX_TIMER_MS } from '../../../src/util/abort.js';

/** What the function answers: its value, or the message it threw. */
function outcome(run: () => unknown): unknown {
  try {
    return { value: run() };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

describe("the REST call route's input without zod (issue #27)", () => {
  // Parsed JSON bodies, valid and not: the fast path must answer each as the schema does.
  const bodies: unknown[] = [
    {},
    { arguments: {} },
    { arguments: { text: 'hi', nested: { a: [1, 2] } } },
    { arguments: { text: 'hi' }, timeoutMs: 5000 },
    { timeoutMs: 1 },
    { timeoutMs: MAX_TIMER_MS },
    { timeoutMs: MAX_TIMER_MS + 1 },
    { timeoutMs: 0 },
    { timeoutMs: -5 },
    { timeoutMs: 1.5 },
    { timeoutMs: '100' },
    { timeoutMs: null },
    { arguments: null },
    { arguments: [] },
    { arguments: 'text' },
    { arguments: {}, extra: 1 },
    { text: 'hi' },
    JSON.parse('{"arguments": {"__proto__": {"x": 1}, "y": 2}}'),
    [],
    null,
    'body',
    42,
  ];

  it('parses every body exactly as CallToolBodySchema does', () => {
    for (const body of bodies) {
      const slow = outcome(() => parseInput(CallToolBodySchema, body, 'body'));
      const fast = outcome(() => parseCallBody(body));
      // A stray field gets the friendlier message (call-body.ts); everything else must match.
      if ((slow as { error?: string }).error?.endsWith('Unknown field')) continue;
      expect(fast, JSON.stringify(body)).toEqual(slow);
    }
  });

  it('parses a name param exactly as NameParamsSchema does', () => {
    for (const params of [{ name: 'mcp_echo_echo' }, { name: '' }, { name: 'x'.repeat(512) }, { name: 'x'.repeat(513) }, { name: 7 }, {}, undefined, null]) {
      expect(
        outcome(() => parseNameParams(params)),
        JSON.stringify(params),
      ).toEqual(outcome(() => parseInput(NameParamsSchema, params, 'params')));
    }
  });
});
