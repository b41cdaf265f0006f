import { describe, expect, it } from 'vitest';

import type { PolicyVerdict } from '../../../../../src/gateway/policies/policy-set.js';
import { compose, contextOf, type RequestContext } from '../../../../../src/gateway/requests/pipeline.js';
import type { AgentRequest } from '../../../../../src/gateway/requests/request-router.js';
import { policy } from '../../../../../src/gateway/requests/stages/policy.js';

/** Runs `request` through the policy stage with a fixed verdict; resolves with the context the route saw, or rejects. */
async function through(request: AgentRequest, verdict: PolicyVerdict, empty = false): Promise<RequestContext> {
  let seen: RequestContext | undefined;
  const stage = policy({ empty, decide: () => verdict }, { hold: () => undefined });
  await compose([stage], async (ctx) => {
    seen = ctx;
    return {};
  })(contextOf(request, { transport: 'rest', agent: { name: 'bot' } }));
  return seen!;
}

describe('policy stage: deny, hold for approval or allow by the first rule that applies', () => {
  it('a deny is POLICY_DENIED naming the rule and its reason, and the request is not routed', async () => {
    const refused = through({ method: 'tools/call', name: 'mcp_db_query', arguments: { sql: 'UPDATE t' } }, { effect: 'deny', rule: 'ro', reason: 'only SELECT' });
    await expect(refused).rejects.toMatchObject({ code: 'POLICY_DENIED', status: 403, message: 'Policy "ro" refused the call: only SELECT' });
    await expect(through({ method: 'resources/read', uri: 'x:///etc' }, { effect: 'deny', rule: 'etc', reason: 'no' })).rejects.toMatchObject({
      message: 'Policy "etc" refused the read: no',
    });
  });

  it('an approve names the rule for the approval stage, whose hold then holds the call', async () => {
    const seen = await through({ method: 'tools/call', name: 'mcp_db_refund', arguments: { amount: 500 } }, { effect: 'approve', rule: 'big', reason: 'human' });
    expect(seen.approvalRule).toBe('big');
  });

  it('an approve on a prompt get cannot wait, so it is refused', async () => {
    await expect(through({ method: 'prompts/get', name: 'p' }, { effect: 'approve', rule: 'big', reason: 'human' })).rejects.toMatchObject({ code: 'POLICY_DENIED' });
  });

  it('allow, no rules, or a kind policies do not judge, passes untouched', async () => {
    expect((await through({ method: 'tools/call', name: 'x' }, { effect: 'allow' })).hold).toBeUndefined();
    expect(await through({ method: 'tools/call', name: 'x' }, { effect: 'deny', rule: 'r', reason: 'r' }, true)).toBeDefined();
    expect(await through({ method: 'completion/complete', params: {} }, { effect: 'deny', rule: 'r', reason: 'r' })).toBeDefined();
  });
});
