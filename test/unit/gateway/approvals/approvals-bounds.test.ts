import { describe, expect, it } from 'vitest';
import type { DaemonEvent } from '../../../../src/events/daemon-events.js';
import { Approvals, MAX_EVENT_ARGUMENT_BYTES, MAX_PENDING_APPROVALS } from '../../../../src/gateway/approvals/approvals.js';
import { ManualClock } from '../../../helpers/manual-clock.js';

/** Issue #22 review: held calls are bounded, and their events do not copy large arguments. */

const policy = { requireApproval: ['*'] };

describe('approval bounds', () => {
  it('refuses the call past the cap with APPROVALS_FULL (and a wait), and frees a place when one is decided', async () => {
    const events: DaemonEvent[] = [];
    const approvals = new Approvals({ publish: (event) => void events.push(event), clock: new ManualClock(0) });
    // Each call has a signal of its own, as in the request path.
    const signal = (): AbortSignal => new AbortController().signal;
    const waits: Array<Promise<void>> = [];
    for (let i = 0; i < MAX_PENDING_APPROVALS; i++) {
      const held = approvals.hold({ server: 's', tool: 't', name: 'x', arguments: { i }, policy }, { signal: signal() });
      waits.push(held!.catch(() => undefined));
    }
    const over = approvals.hold({ server: 's', tool: 't', name: 'x', policy }, { signal: signal() });
    await expect(over).rejects.toMatchObject({ code: 'APPROVALS_FULL', status: 429, retryAfterMs: 5_000 });
    const first = approvals.list()[0]!;
    approvals.decide(first.id, 'denied');
    const next = approvals.hold({ server: 's', tool: 't', name: 'x', policy }, { signal: signal() });
    expect(approvals.list()).toHaveLength(MAX_PENDING_APPROVALS);
    approvals.close();
    await expect(next).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
    await Promise.all(waits);
  });

  it('an approval.requested event carries small arguments whole and large ones only by size', async () => {
    const events: Array<DaemonEvent & { arguments?: unknown }> = [];
    // With argument audit on (issue #40 item 3: otherwise no arguments are shown at all).
    const approvals = new Approvals({ publish: (event) => void events.push(event), clock: new ManualClock(0), showArguments: (args) => args });
    const signal = new AbortController().signal;
    const big = { blob: 'x'.repeat(MAX_EVENT_ARGUMENT_BYTES) };
    const waits = [
      approvals.hold({ server: 's', tool: 't', name: 'x', arguments: { small: 1 }, policy }, { signal })!.catch(() => undefined),
      approvals.hold({ server: 's', tool: 't', name: 'x', arguments: big, policy }, { signal })!.catch(() => undefined),
    ];
    const requested = events.filter((event) => event.type === 'approval.requested');
    expect(requested.map((event) => event.arguments)).toEqual([{ small: 1 }, { 'switchboard/truncated': true, bytes: Buffer.byteLength(JSON.stringify(big)) }]);
    // The operator's list still has them whole.
    expect(approvals.list()[1]!.arguments).toEqual(big);
    approvals.close();
    await Promise.all(waits);
  });
});
