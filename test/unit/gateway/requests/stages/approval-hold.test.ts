import { describe, expect, it } from 'vitest';
import type { ApprovalTarget, HoldOptions } from '../../../../../src/gateway/approvals/approvals.js';
import { compose, contextOf, type RequestContext } from '../../../../../src/gateway/requests/pipeline.js';
import { approvalHold } from '../../../../../src/gateway/requests/stages/approval-hold.js';

const target: ApprovalTarget = { server: 'srv', tool: 'drop', name: 'srv_drop', arguments: {}, policy: {} } as ApprovalTarget;

describe('approval hold: a routed tool call waits for the operator when its tool requires it', () => {
  it("gives the route a hold that asks the approvals with the caller's agent, signal and progress", async () => {
    const asked: HoldOptions[] = [];
    const stage = approvalHold({
      prompt: 'url',
      hold: (_target, options) => {
        asked.push(options);
        return undefined;
      },
    });
    const signal = new AbortController().signal;
    const onProgress = (): void => undefined;
    let seen: RequestContext | undefined;
    const own = (ctx: RequestContext, next: () => Promise<Record<string, unknown>>) => {
      ctx.signal = signal;
      return next();
    };
    await compose([own, stage], async (ctx) => {
      seen = ctx;
      return {};
    })(contextOf({ method: 'tools/call', name: 'srv_drop' }, { transport: 'rest', agent: { name: 'bot' }, onProgress }));
    expect(seen?.hold).toBeTypeOf('function');
    expect(seen?.hold?.(target)).toBeUndefined();
    expect(asked).toEqual([{ agent: { name: 'bot' }, signal, onProgress }]);
  });

  it('asks a 2026-07-28 caller that takes elicitations instead of holding it, with its answer and the policy rule (issue #40 item 3)', async () => {
    const asked: HoldOptions[] = [];
    const stage = approvalHold({ prompt: 'url', hold: (_target, options) => void asked.push(options) });
    const caller = (takesInputRequired: boolean, capabilities: Record<string, unknown>) => ({
      agent: 'a',
      takesInputRequired,
      capabilities,
      can: () => true,
      request: async () => ({}),
      log: () => undefined,
    });
    const ruled = (ctx: RequestContext, next: () => Promise<Record<string, unknown>>) => {
      ctx.approvalRule = 'big-refunds';
      return next();
    };
    const run = (options: Record<string, unknown>) =>
      compose([stage, ruled], async (ctx) => {
        ctx.hold?.(target);
        return {};
      })(contextOf({ method: 'tools/call', name: 'srv_drop' }, { transport: 'mcp', ...options }));
    await run({ caller: caller(true, { elicitation: { url: {} } }), approvalAnswer: { action: 'accept' } });
    await run({ caller: caller(false, { elicitation: { url: {} } }) });
    await run({ caller: caller(true, {}) });
    expect(asked.map((o) => [o.rule, o.ask])).toEqual([
      ['big-refunds', { prompt: 'url', answer: { action: 'accept' } }],
      ['big-refunds', undefined],
      ['big-refunds', undefined],
    ]);
  });

  it('holds nothing but tool calls', async () => {
    const stage = approvalHold({ prompt: 'url', hold: () => Promise.resolve() });
    let hold: unknown = 'unset';
    await compose([stage], async (ctx) => {
      hold = ctx.hold;
      return {};
    })(contextOf({ method: 'resources/read', uri: 'file:///a' }, { transport: 'mcp' }));
    expect(hold).toBeUndefined();
  });
});
