import type { FetchLike } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../../../src/errors.js';
import { BackPressure } from '../../../../src/upstream/server/back-pressure.js';
import { watchRetryAfter } from '../../../../src/upstream/transport/retry-after.js';
import { ManualClock } from '../../../helpers/manual-clock.js';

/**
 * Issue #35 item 3, the transport's last line: whatever an HTTP upstream's connections would send
 * during the pause it asked for (the event stream's reconnect, a request that raced the 429) is
 * held until the pause is over; the 429's `Retry-After` starts the pause; a session's DELETE is
 * refused at once rather than held.
 */

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A base fetch that records each request it was asked to send and answers `status`. */
function recordingFetch(answer: () => Response): { fetch: FetchLike; sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    fetch: async (url, init) => {
      sent.push(`${init?.method ?? 'GET'} ${String(url)}`);
      return answer();
    },
  };
}

describe('watchRetryAfter', () => {
  it('starts the pause on a 429 with Retry-After and holds every later request until it is over', async () => {
    const clock = new ManualClock(0);
    const pause = new BackPressure(clock);
    let status = 429;
    const base = recordingFetch(() => new Response('slow down', { status, headers: { 'retry-after': '2' } }));
    const fetch = watchRetryAfter(base.fetch, pause, () => clock.now());

    expect((await fetch('http://127.0.0.1:1/mcp', { method: 'POST' })).status).toBe(429);
    expect(pause.remainingMs()).toBe(2_000);
    status = 200;
    let answered = false;
    const held = fetch('http://127.0.0.1:1/mcp', { method: 'GET' }).then((response) => ((answered = true), response));
    clock.advance(1_999);
    await flush();
    expect(base.sent).toEqual(['POST http://127.0.0.1:1/mcp']);
    expect(answered).toBe(false);
    clock.advance(1);
    expect((await held).status).toBe(200);
    expect(base.sent).toEqual(['POST http://127.0.0.1:1/mcp', 'GET http://127.0.0.1:1/mcp']);
  });

  it('lets a held request go when its signal aborts, unsent', async () => {
    const clock = new ManualClock(0);
    const pause = new BackPressure(clock);
    pause.pause(5_000);
    const base = recordingFetch(() => new Response('{}'));
    const controller = new AbortController();
    const held = watchRetryAfter(base.fetch, pause)('http://127.0.0.1:1/mcp', { method: 'POST', signal: controller.signal });
    controller.abort(new Error('transport closed'));
    await expect(held).rejects.toThrow('transport closed');
    expect(base.sent).toEqual([]);
    expect(clock.pendingDelays()).toEqual([]);
  });

  it('refuses a session DELETE in a pause at once, unsent', async () => {
    const clock = new ManualClock(0);
    const pause = new BackPressure(clock);
    pause.pause(5_000);
    const base = recordingFetch(() => new Response(null, { status: 204 }));
    const refused = await watchRetryAfter(base.fetch, pause)('http://127.0.0.1:1/mcp', { method: 'DELETE' }).catch((err: unknown) => err);
    expect(isSwitchboardError(refused, 'SERVER_BUSY')).toBe(true);
    expect(base.sent).toEqual([]);
  });
});
