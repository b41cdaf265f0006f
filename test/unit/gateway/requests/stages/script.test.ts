import { describe, expect, it } from 'vitest';
import { compose, contextOf, type RequestContext } from '../../../../../src/gateway/requests/pipeline.js';
import { script } from '../../../../../src/gateway/requests/stages/script.js';

describe('script stage: a code-mode script is run here and never routed (issue #39)', () => {
  it('hands a scripts/run request to the runner with its context, and the rest of the path nothing', async () => {
    const seen: RequestContext[] = [];
    const stage = script(async (ctx) => {
      seen.push(ctx);
      return { value: 42 };
    });
    const routed: string[] = [];
    const path = compose([stage], async (ctx) => {
      routed.push(ctx.request.method);
      return {};
    });
    expect(await path(contextOf({ method: 'scripts/run', code: 'return 42' }, { transport: 'rest', runId: 'outer' }))).toEqual({ value: 42 });
    expect(seen.map((ctx) => ctx.request)).toEqual([{ method: 'scripts/run', code: 'return 42' }]);
    expect(routed).toEqual([]);
  });

  it('passes every other kind on', async () => {
    const stage = script(() => Promise.reject(new Error('not a script')));
    const path = compose([stage], async (ctx) => ({ routed: ctx.request.method }));
    expect(await path(contextOf({ method: 'tools/call', name: 'a_b' }, { transport: 'mcp' }))).toEqual({ routed: 'tools/call' });
  });
});
