import { describe, expect, it } from 'vitest';
import { compileAgentView } from '../../../../../src/gateway/agents/agent-view.js';
import { contextOf } from '../../../../../src/gateway/requests/pipeline.js';
import type { SendOptions } from '../../../../../src/gateway/requests/request-router.js';
import { route } from '../../../../../src/gateway/requests/stages/route.js';

describe('route: the request leaves for its server with what the stages gathered', () => {
  it("hands the router the request's signal, deadline, progress, caller, the agent's view and the hold", async () => {
    const sent: SendOptions[] = [];
    const terminal = route({
      send: (_request, options) => {
        sent.push(options ?? {});
        return Promise.resolve({ ok: true });
      },
    });
    const view = compileAgentView({ tools: ['srv_*'] });
    const ctx = contextOf({ method: 'tools/call', name: 'srv_x' }, { transport: 'rest', timeoutMs: 1_500, agent: { name: 'bot', view }, onProgress: () => undefined });
    ctx.signal = new AbortController().signal;
    ctx.hold = () => undefined;
    expect(await terminal(ctx)).toEqual({ ok: true });
    expect(sent[0]).toMatchObject({ signal: ctx.signal, timeoutMs: 1_500, view, hold: ctx.hold });
    expect(sent[0]?.onProgress).toBeTypeOf('function');
  });

  it("sends the operator's request with no view (everything) and nothing it was not given", async () => {
    const sent: SendOptions[] = [];
    const terminal = route({
      send: (_request, options) => {
        sent.push(options ?? {});
        return Promise.resolve({});
      },
    });
    await terminal(contextOf({ method: 'prompts/get', name: 'p' }, { transport: 'mcp' }));
    expect(sent).toEqual([{}]);
  });
});
