import { describe, expect, it } from 'vitest';
import type { DaemonEvent } from '../../../../src/events/daemon-events.js';
import { ApprovalPending, Approvals, type ApprovalDecision, type ApprovalTarget, type HoldOptions } from '../../../../src/gateway/approvals/approvals.js';
import { callKeyOf } from '../../../../src/gateway/approvals/call-key.js';
import { promptFor } from '../../../../src/gateway/requests/stages/approval-hold.js';
import { ManualClock } from '../../../helpers/manual-clock.js';

/** Issue #40 item 3, the room itself: approvals bound to agent, tool and arguments digest, on the injected clock. */

const policy = { requireApproval: ['*'] };
const target = (args: Record<string, unknown>, extra: Partial<ApprovalTarget> = {}): ApprovalTarget => ({
  server: 's',
  tool: 'run',
  name: 's_run',
  arguments: args,
  policy,
  ...extra,
});

function room(options: Partial<ConstructorParameters<typeof Approvals>[0]> = {}) {
  const events: DaemonEvent[] = [];
  const decisions: Array<[ApprovalDecision, Record<string, unknown>]> = [];
  const clock = new ManualClock(0);
  const approvals = new Approvals({ publish: (event) => void events.push(event), clock, onDecision: (decision, args) => void decisions.push([decision, args]), ...options });
  const opts = (extra: Partial<HoldOptions> = {}): HoldOptions => ({ signal: new AbortController().signal, agent: { name: 'alice' }, ...extra });
  return { approvals, events, decisions, clock, opts };
}

/** What a hold came to: passed, or the code it failed with. */
async function outcome(held: Promise<void> | undefined): Promise<string> {
  if (held === undefined) return 'not held';
  return held.then(
    () => 'passed',
    (err: { code?: string }) => err.code ?? 'unknown',
  );
}

describe('approvals bound to the exact call', () => {
  it('digests canonical JSON: key order does not matter, values and agents do', () => {
    expect(callKeyOf('a', 's', 't', { x: 1, y: [1, { b: 2, a: 1 }] })).toEqual(callKeyOf('a', 's', 't', { y: [1, { a: 1, b: 2 }], x: 1 }));
    expect(callKeyOf('a', 's', 't', { x: 1 }).argumentsDigest).not.toBe(callKeyOf('a', 's', 't', { x: 2 }).argumentsDigest);
    expect(callKeyOf('a', 's', 't', { x: 1 }).key).not.toBe(callKeyOf('b', 's', 't', { x: 1 }).key);
    expect(callKeyOf(undefined, 's', 't', undefined).argumentsDigest).toBe(callKeyOf(undefined, 's', 't', {}).argumentsDigest);
  });

  it('approving one held call lets that call run and no other', async () => {
    const { approvals, opts } = room();
    const a = approvals.hold(target({ sql: 'DROP a' }), opts());
    const b = approvals.hold(target({ sql: 'DROP b' }), opts());
    const [pendingA, pendingB] = approvals.list();
    expect(pendingA!.argumentsDigest).not.toBe(pendingB!.argumentsDigest);
    approvals.decide(pendingA!.id, 'approved');
    expect(await outcome(a)).toBe('passed');
    expect(approvals.list().map((p) => p.id)).toEqual([pendingB!.id]);
    const again = approvals.hold(target({ sql: 'DROP a' }), opts());
    expect(approvals.list()).toHaveLength(2);
    approvals.close();
    expect([await outcome(b), await outcome(again)]).toEqual(['SHUTTING_DOWN', 'SHUTTING_DOWN']);
  });

  it('"the same call for 1 h": identical calls of that agent pass until it expires; calls already waiting go ahead', async () => {
    const { approvals, clock, opts, events } = room();
    const first = approvals.hold(target({ n: 1 }), opts());
    const twin = approvals.hold(target({ n: 1 }), opts());
    const [pending] = approvals.list();
    const decision = approvals.decide(pending!.id, 'approved', { forMs: 3_600_000 });
    expect(decision.until).toBe(new Date(3_600_000).toISOString());
    expect([await outcome(first), await outcome(twin)]).toEqual(['passed', 'passed']);
    clock.advance(3_599_999);
    expect(await outcome(approvals.hold(target({ n: 1 }), opts()))).toBe('passed');
    expect(approvals.list()).toEqual([]);
    const byBob = approvals.hold(target({ n: 1 }), opts({ agent: { name: 'bob' } }));
    expect(approvals.list()).toHaveLength(1);
    clock.advance(1);
    const late = approvals.hold(target({ n: 1 }), opts());
    expect(approvals.list()).toHaveLength(2);
    approvals.close();
    await Promise.all([outcome(byBob), outcome(late)]);
    expect(events.filter((e) => e.type === 'approval.requested')).toHaveLength(4);
  });

  it('answers a caller that takes input_required with APPROVAL_PENDING, and its retry passes once approved, once', async () => {
    const { approvals, opts, events } = room();
    const ask = { ask: { prompt: 'url' as const } };
    const first = approvals.hold(target({ q: 1 }), opts(ask));
    await expect(first).rejects.toBeInstanceOf(ApprovalPending);
    await expect(first).rejects.toMatchObject({ code: 'APPROVAL_PENDING', prompt: 'url', approval: { mode: 'input_required', agent: 'alice' } });
    const [pending] = approvals.list();
    // A retry before the decision is asked again, about the same approval.
    await expect(approvals.hold(target({ q: 1 }), opts(ask))).rejects.toMatchObject({ approval: { id: pending!.id } });
    expect(approvals.list()).toHaveLength(1);
    approvals.decide(pending!.id, 'approved');
    expect(await outcome(approvals.hold(target({ q: 1 }), opts(ask)))).toBe('passed');
    // That approval is used up: the next identical call asks anew.
    await expect(approvals.hold(target({ q: 1 }), opts(ask))).rejects.toMatchObject({ code: 'APPROVAL_PENDING' });
    expect(approvals.list()[0]!.id).not.toBe(pending!.id);
    approvals.decide(approvals.list()[0]!.id, 'denied');
    expect(await outcome(approvals.hold(target({ q: 1 }), opts(ask)))).toBe('APPROVAL_DENIED');
    expect(events.filter((e) => e.type === 'approval.requested')).toHaveLength(2);
  });

  it('a retry after the approval timed out gets APPROVAL_TIMEOUT (on the injected clock)', async () => {
    const { approvals, clock, opts } = room({ timeoutMs: 1_000 });
    const ask = { ask: { prompt: 'url' as const } };
    await expect(approvals.hold(target({ q: 1 }), opts(ask))).rejects.toMatchObject({ code: 'APPROVAL_PENDING' });
    clock.advance(1_000);
    expect(approvals.list()).toEqual([]);
    expect(await outcome(approvals.hold(target({ q: 1 }), opts(ask)))).toBe('APPROVAL_TIMEOUT');
  });

  it('takes a yes/no form answer on the retry', async () => {
    const { approvals, opts, decisions } = room({ prompt: 'form' });
    const form = (answer?: unknown) => opts({ ask: { prompt: 'form', ...(answer !== undefined ? { answer } : {}) } });
    await expect(approvals.hold(target({ q: 1 }), form())).rejects.toMatchObject({ prompt: 'form' });
    expect(await outcome(approvals.hold(target({ q: 1 }), form({ action: 'accept', content: { approve: true } })))).toBe('passed');
    await expect(approvals.hold(target({ q: 2 }), form())).rejects.toMatchObject({ code: 'APPROVAL_PENDING' });
    expect(await outcome(approvals.hold(target({ q: 2 }), form({ action: 'decline' })))).toBe('APPROVAL_DENIED');
    expect(decisions.map(([d, args]) => [d.outcome, args])).toEqual([
      ['approved', { q: 1 }],
      ['denied', { q: 2 }],
    ]);
  });

  it('holds a call a policy rule asks about whatever the globs say, naming the rule; shows arguments only when allowed', async () => {
    const { approvals, opts, events } = room();
    const unglobbed = target({ amount: 500 }, { policy: {} });
    expect(approvals.hold(unglobbed, opts())).toBeUndefined();
    const held = approvals.hold(unglobbed, opts({ rule: 'big-refunds' }));
    expect(approvals.list()).toEqual([expect.objectContaining({ rule: 'big-refunds', mode: 'held', argumentsDigest: expect.stringMatching(/^[0-9a-f]{64}$/) })]);
    expect(approvals.list()[0]).not.toHaveProperty('arguments');
    expect(events[0]).not.toHaveProperty('arguments');
    approvals.decide(approvals.list()[0]!.id, 'denied');
    expect(await outcome(held)).toBe('APPROVAL_DENIED');
    expect(events[1]).toMatchObject({ type: 'approval.resolved', rule: 'big-refunds', outcome: 'denied' });

    const shown = room({ showArguments: (args) => ({ ...args, token: '****' }) });
    const call = shown.approvals.hold(target({ amount: 1, token: 'secret' }), shown.opts());
    expect(shown.approvals.list()[0]!.arguments).toEqual({ amount: 1, token: '****' });
    shown.approvals.close();
    await outcome(call);
  });

  it('asks a caller only what it declared it can be asked', () => {
    expect(promptFor(undefined, 'url')).toBeUndefined();
    expect(promptFor({ elicitation: {} }, 'url')).toBeUndefined();
    expect(promptFor({ elicitation: { url: {} } }, 'url')).toBe('url');
    expect(promptFor({ elicitation: {} }, 'form')).toBe('form');
    expect(promptFor({ elicitation: { url: {} } }, 'form')).toBe('url');
    expect(promptFor({ elicitation: { form: {}, url: {} } }, 'form')).toBe('form');
  });
});
