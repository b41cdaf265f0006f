import { describe, expect, it } from 'vitest';
import { loadDaemonConfig } from '../../../../src/config/load.js';
import { isSwitchboardError } from '../../../../src/errors.js';
import { parseRetryAfter, MAX_RETRY_AFTER_MS } from '../../../../src/upstream/transport/retry-after.js';
import { BackPressure } from '../../../../src/upstream/server/back-pressure.js';
import { ManualClock } from '../../../helpers/manual-clock.js';
import { makeTree } from '../../config/temp-tree.js';

describe('Retry-After', () => {
  it('reads delta-seconds and HTTP dates, caps long pauses, ignores garbage', () => {
    const now = Date.parse('2026-12-03T22:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Thu, 03 Dec 2026 22:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Thu, 03 Dec 2026 21:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('86400', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('keeps the longest pause asked for, and forgets it once it is over', () => {
    const clock = new ManualClock(1_000);
    const pause = new BackPressure(clock);
    pause.pause(2_000);
    pause.pause(500);
    expect(pause.remainingMs()).toBe(2_000);
    expect(pause.until).toBe(3_000);
    clock.advance(2_000);
    expect(pause.remainingMs()).toBe(0);
    expect(pause.until).toBeUndefined();
  });
});

describe('traffic limits in the config', () => {
  it.each([
    [{ maxConcurrentCalls: 0 }, 'maxConcurrentCalls must be a whole number from 1 to 10000'],
    [{ maxConcurrentCalls: 2.5 }, 'maxConcurrentCalls must be a whole number from 1 to 10000'],
    [{ queueSize: -1 }, 'queueSize must be a whole number from 0 to 100000'],
  ])('refuses %j with a clear message', async (content, message) => {
    const t = await makeTree();
    const path = await t.write('sb.json', content);
    const err = await loadDaemonConfig({ path, env: {}, home: t.home }).catch((e: unknown) => e);
    expect(isSwitchboardError(err, 'CONFIG_INVALID')).toBe(true);
    expect((err as Error).message).toContain(message);
  });

  it.each([
    [{ mcpServers: { a: { command: 'x', maxConcurrentCalls: -3 } } }, 'maxConcurrentCalls must be a whole number from 1 to 10000'],
    [{ mcpServers: { a: { command: 'x', queueSize: 'many' } } }, 'queueSize must be a whole number from 0 to 100000'],
  ])('leaves the server of %j out with a clear message (issue #36 item 2)', async (content, message) => {
    const t = await makeTree();
    const path = await t.write('sb.json', content);
    const config = await loadDaemonConfig({ path, env: {}, home: t.home });
    expect(config.mcpServers).toEqual({});
    expect(config.serverIssues.join('\n')).toContain(message);
  });

  it("pins nothing by default: every server's limit adapts and its queue is bounded by deadlines (issue #35)", async () => {
    const t = await makeTree();
    const config = await loadDaemonConfig({ path: await t.write('sb.json', {}), env: {}, home: t.home });
    expect(config.maxConcurrentCalls).toBeUndefined();
    expect(config.queueSize).toBeUndefined();
    const pinned = await loadDaemonConfig({ path: await t.write('pinned.json', { maxConcurrentCalls: 16, queueSize: 64 }), env: {}, home: t.home });
    expect(pinned).toMatchObject({ maxConcurrentCalls: 16, queueSize: 64 });
  });
});
