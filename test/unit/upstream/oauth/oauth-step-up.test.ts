import { describe, expect, it } from 'vitest';
import { MAX_SIGN_INS_IN_A_ROW, StepUpGuard } from '../../../../src/upstream/oauth/step-up.js';

const KEY = { server: 'remote', authHash: 'h1' };

describe('the step-up guard (issue #29 item 3)', () => {
  it('allows a step-up for scope not yet granted, refuses one for the scope just granted, and names it', () => {
    const guard = new StepUpGuard();
    guard.signedIn(KEY, 'mcp', false);
    expect(guard.refusal(KEY, ['mcp', 'admin'], 'mcp')).toBeUndefined();
    guard.signedIn(KEY, 'mcp admin', true);
    expect(guard.refusal(KEY, ['mcp', 'admin'], undefined)).toContain('"mcp admin" again right after a sign-in granted it');
    // The token's own scope counts as granted (after a restart it is all that is known).
    expect(new StepUpGuard().refusal(KEY, ['admin'], 'mcp admin')).toContain('refused scope "admin" again');
  });

  it(`stops at ${MAX_SIGN_INS_IN_A_ROW} sign-ins in a row; a person's own sign-in, another config or a logout starts afresh`, () => {
    const guard = new StepUpGuard();
    guard.signedIn(KEY, 'mcp', false);
    expect(guard.refusal(KEY, ['step1'], 'mcp')).toBeUndefined();
    guard.signedIn(KEY, 'mcp step1', true);
    expect(guard.refusal(KEY, ['step2'], 'mcp step1')).toBeUndefined();
    guard.signedIn(KEY, 'mcp step1 step2', true);
    expect(guard.refusal(KEY, ['step3'], 'mcp step1 step2')).toContain(`after ${MAX_SIGN_INS_IN_A_ROW} sign-ins in a row`);
    expect(guard.refusal({ ...KEY, authHash: 'h2' }, ['step3'], undefined)).toBeUndefined();
    guard.signedIn(KEY, 'mcp', false);
    expect(guard.refusal(KEY, ['step3'], 'mcp')).toBeUndefined();
    guard.signedIn(KEY, 'mcp step3', true);
    guard.signedIn(KEY, 'mcp step3 step4', true);
    guard.forget('remote');
    expect(guard.refusal(KEY, ['step5'], undefined)).toBeUndefined();
  });
});
