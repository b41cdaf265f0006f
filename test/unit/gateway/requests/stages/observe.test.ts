import { describe, expect, it } from 'vitest';
import { SwitchboardError } from '../../../../../src/errors.js';
import type { AuditRecord } from '../../../../../src/gateway/audit/audit-log.js';
import { CallMetrics } from '../../../../../src/gateway/requests/call-metrics.js';
import { compose, contextOf, type RequestResult, type Stage } from '../../../../../src/gateway/requests/pipeline.js';
import { RequestMetrics } from '../../../../../src/gateway/requests/request-metrics.js';
import { observe } from '../../../../../src/gateway/requests/stages/observe.js';

function observed(answer: (ctx: Parameters<Stage>[0]) => Promise<RequestResult>, before: Stage[] = []) {
  const metrics = new CallMetrics();
  const requestMetrics = new RequestMetrics();
  const audited: AuditRecord[] = [];
  let time = 1_000;
  const stage = observe({
    serverOf: () => 'srv',
    metrics,
    requestMetrics,
    audit: { recordRequest: (record) => void audited.push(record) },
    now: () => time,
  });
  const slow: Stage = async (_ctx, next) => {
    time += 250;
    return next();
  };
  const run = compose([stage, ...before, slow], answer);
  return { run, metrics, requestMetrics, audited };
}

describe('observe: every request timed, counted and audited, however it ends', () => {
  it('counts a tool call by outcome and records its duration from the injected clock in the audit', async () => {
    const { run, metrics, requestMetrics, audited } = observed(async () => ({ content: [] }));
    await run(contextOf({ method: 'tools/call', name: 'srv_echo', arguments: {} }, { transport: 'rest', agent: { name: 'bot' } }));
    expect(metrics.count('ok')).toBe(1);
    expect(requestMetrics.render().join('\n')).toContain('switchboard_upstream_requests_total{transport="rest",server="srv",method="tools/call",outcome="ok"} 1');
    expect(audited).toMatchObject([{ agent: 'bot', server: 'srv', name: 'srv_echo', outcome: 'ok', durationMs: 250 }]);
  });

  it('tells a tool error, an unknown name and a refusal before the route apart', async () => {
    const toolError = observed(async () => ({ content: [], isError: true }));
    await toolError.run(contextOf({ method: 'tools/call', name: 't' }, { transport: 'mcp' }));
    expect(toolError.metrics.count('tool_error')).toBe(1);

    const unknown = observed(() => Promise.reject(new SwitchboardError('TOOL_NOT_FOUND')));
    await expect(unknown.run(contextOf({ method: 'tools/call', name: 't' }, { transport: 'mcp' }))).rejects.toThrow();
    expect(unknown.metrics.count('not_found')).toBe(1);

    // A stage after observe that refuses (a limit): still counted and audited, as an error.
    const limit: Stage = () => Promise.reject(new SwitchboardError('AGENT_RATE_LIMITED', 'over', { retryAfterMs: 10 }));
    const refused = observed(async () => ({}), [limit]);
    await expect(refused.run(contextOf({ method: 'tools/call', name: 't' }, { transport: 'rest', agent: { name: 'bot' } }))).rejects.toThrow('over');
    expect(refused.metrics.count('error')).toBe(1);
    expect(refused.audited).toMatchObject([{ outcome: 'denied', code: 'AGENT_RATE_LIMITED' }]);
  });

  it('counts a request whose own signal was aborted as cancelled, or as shutdown when the shutdown aborted it', async () => {
    for (const [reason, outcome] of [
      [new Error('client said so'), 'cancelled'],
      [new SwitchboardError('SHUTTING_DOWN'), 'shutdown'],
    ] as const) {
      const controller = new AbortController();
      const own: Stage = (ctx, next) => {
        ctx.signal = controller.signal;
        return next();
      };
      const { run, metrics } = observed(() => {
        controller.abort(reason);
        return Promise.reject(reason);
      }, [own]);
      await expect(run(contextOf({ method: 'tools/call', name: 't' }, { transport: 'rest' }))).rejects.toBe(reason);
      expect(metrics.count(outcome)).toBe(1);
    }
  });
});
