import { describe, expect, it, onTestFinished } from 'vitest';
import { Continuation, Continuations } from '../../../../src/http/endpoint/continuations.js';
import { RelayStates } from '../../../../src/http/endpoint/relay-state.js';
import { deferred } from '../../../../src/util/deferred.js';

/** The pure parts of #14's `input_required` bridge: parked calls and sealed relay states. */

describe('Continuation', () => {
  it('ends a round with the questions asked, and resumes the call with the answers of the next', async () => {
    const continuation = new Continuation<string>(async (self) => {
      const answer = await self.ask('elicitation/create', { message: 'Name?' }, self.signal);
      return `hello ${String((answer.content as { name: string }).name)}`;
    });
    const first = await continuation.next({}, new AbortController().signal);
    expect(first).toEqual({ kind: 'input', requests: { elicitation_create_1: { method: 'elicitation/create', params: { message: 'Name?' } } } });
    continuation.answer({ elicitation_create_1: { action: 'accept', content: { name: 'Ada' } } });
    expect(await continuation.next({}, new AbortController().signal)).toEqual({ kind: 'done', value: 'hello Ada' });
  });

  it('asks again what a retry left unanswered, and ignores answers to questions never asked', async () => {
    const continuation = new Continuation<string>(async (self) => {
      const answer = await self.ask('roots/list', undefined, self.signal);
      return JSON.stringify(answer);
    });
    await continuation.next({}, new AbortController().signal);
    continuation.answer({ unrelated: { roots: [] } });
    expect(await continuation.next({}, new AbortController().signal)).toEqual({ kind: 'input', requests: { roots_list_1: { method: 'roots/list' } } });
  });

  it('relays progress to the round in progress only, never backwards', async () => {
    const attached = deferred();
    const continuation = new Continuation<void>(async (self) => {
      self.progress({ progress: 0.5 });
      await attached.promise;
      for (const progress of [1, 1, 2, 1.5, 3]) self.progress({ progress, total: 3 });
    });
    const seen: number[] = [];
    const round = continuation.next({ progress: (p) => seen.push(p.progress) }, new AbortController().signal);
    attached.resolve();
    expect(await round).toEqual({ kind: 'done', value: undefined });
    // 0.5 came before any round was attached; a repeat or a step back (a retried call) is dropped.
    expect(seen).toEqual([1, 2, 3]);
  });

  it("cancels the call when the round's request is cancelled", async () => {
    const continuation = new Continuation<string>(
      (self) =>
        new Promise((_, reject) => {
          self.signal.addEventListener('abort', () => reject(self.signal.reason), { once: true });
        }),
    );
    const request = new AbortController();
    const round = continuation.next({}, request.signal);
    request.abort(new Error('client went away'));
    expect(await round).toMatchObject({ kind: 'failed', error: new Error('client went away') });
  });
});

describe('Continuations', () => {
  it('gives a parked call to its token once, and cancels one nobody came back for', async () => {
    const table = new Continuations(20, 10);
    onTestFinished(() => table.abortAll(new Error('done')));
    const kept = new Continuation<void>((self) => new Promise((resolve) => self.signal.addEventListener('abort', () => resolve(), { once: true })));
    table.park(kept as Continuation<unknown>);
    expect(table.take(kept.token)).toBe(kept);
    expect(table.take(kept.token)).toBeUndefined();

    const forgotten = new Continuation<void>((self) => new Promise((resolve) => self.signal.addEventListener('abort', () => resolve(), { once: true })));
    table.park(forgotten as Continuation<unknown>);
    const aborted = new Promise<unknown>((resolve) => forgotten.signal.addEventListener('abort', () => resolve(forgotten.signal.reason), { once: true }));
    expect(await aborted).toMatchObject({ code: 'TOOL_CALL_TIMEOUT' });
    expect(table.take(forgotten.token)).toBeUndefined();
  });
});

describe('RelayStates', () => {
  it("opens what it sealed for the same request, with the server's state and its own answers", () => {
    const states = new RelayStates();
    const sealed = states.seal('tools/call a', 'server-state', { roots: { roots: [] } });
    expect(RelayStates.owns(sealed)).toBe(true);
    expect(states.open(sealed, 'tools/call a')).toEqual({ serverState: 'server-state', answered: { roots: { roots: [] } } });
  });

  it('refuses a state that was altered, forged, meant for another request, or expired', () => {
    let now = 1_000;
    const states = new RelayStates(60_000, () => now);
    const sealed = states.seal('tools/call a', 's');
    expect(states.open(`${sealed}-TAMPERED`, 'tools/call a')).toBeUndefined();
    expect(states.open(new RelayStates().seal('tools/call a', 's'), 'tools/call a')).toBeUndefined();
    expect(states.open(sealed, 'tools/call b')).toBeUndefined();
    now += 60_001;
    expect(states.open(sealed, 'tools/call a')).toBeUndefined();
  });
});
