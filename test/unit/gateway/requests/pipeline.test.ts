import { describe, expect, it } from 'vitest';
import { compose, contextOf, type Stage } from '../../../../src/gateway/requests/pipeline.js';

const request = { method: 'tools/call', name: 'x' } as const;

describe('compose: the stages in order, then the terminal', () => {
  it('runs each stage around the rest of the path, in order, and returns what the terminal answered', async () => {
    const seen: string[] = [];
    const stage =
      (name: string): Stage =>
      async (_ctx, next) => {
        seen.push(`${name} in`);
        const result = await next();
        seen.push(`${name} out`);
        return result;
      };
    const run = compose([stage('a'), stage('b')], async () => {
      seen.push('terminal');
      return { answered: true };
    });
    expect(await run(contextOf(request, { transport: 'rest' }))).toEqual({ answered: true });
    expect(seen).toEqual(['a in', 'b in', 'terminal', 'b out', 'a out']);
  });

  it('lets a stage call the rest again (as the startup wait does) and stop the path with a throw', async () => {
    let sent = 0;
    const again: Stage = async (_ctx, next) => {
      await next().catch(() => undefined);
      return next();
    };
    const run = compose([again], async () => {
      sent += 1;
      if (sent === 1) throw new Error('first');
      return { sent };
    });
    expect(await run(contextOf(request, { transport: 'mcp' }))).toEqual({ sent: 2 });
    const refuse: Stage = () => Promise.reject(new Error('refused'));
    await expect(compose([refuse], () => Promise.resolve({}))(contextOf(request, { transport: 'rest' }))).rejects.toThrow('refused');
  });

  it('hands every stage the same context, so a stage can leave something for a later one', async () => {
    const marker = new AbortController().signal;
    const first: Stage = (ctx, next) => {
      ctx.signal = marker;
      return next();
    };
    const run = compose([first], (ctx) => Promise.resolve({ same: ctx.signal === marker }));
    expect(await run(contextOf(request, { transport: 'rest' }))).toEqual({ same: true });
  });
});
