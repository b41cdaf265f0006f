import { describe, expect, it } from 'vitest';
import { compose, contextOf, type RequestResult } from '../../../../../src/gateway/requests/pipeline.js';
import { resultGuard } from '../../../../../src/gateway/requests/stages/result-guard.js';
import { TRUNCATED_META_KEY } from '../../../../../src/gateway/results/result-guard.js';
import { ResultHandles } from '../../../../../src/store/result-handles.js';
import { ManualClock } from '../../../../helpers/manual-clock.js';

const CAP = 1_000;
const lines = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i} of the log`).join('\n');

function guarded(answer: RequestResult, caps: { agent?: number } = {}) {
  const clock = new ManualClock(Date.parse('2026-12-05T12:00:00Z'));
  const handles = new ResultHandles({ ttlMs: 60_000 }, clock);
  const stage = resultGuard({ capOf: (_tool, agent) => (agent && caps.agent !== undefined ? caps.agent : CAP), handles });
  const run = compose([stage], async () => answer);
  const as = (agent: string | undefined, transport: 'rest' | 'mcp' = 'mcp') => ({ transport, ...(agent ? { agent: { name: agent } } : {}) });
  return {
    clock,
    handles,
    call: (agent?: string, transport?: 'rest' | 'mcp') => run(contextOf({ method: 'tools/call', name: 't' }, as(agent, transport))),
    read: (handle: string, agent?: string, read: Record<string, unknown> = {}) => run(contextOf({ method: 'results/read', handle, read }, as(agent))),
  };
}

describe('result guard: a result over the cap is kept and cut; reads answer from what was kept', () => {
  it('passes a result within the cap as the same object, and leaves nothing kept', async () => {
    const small = { content: [{ type: 'text', text: 'fine' }], _meta: { a: 1 } };
    const { call, handles } = guarded(small);
    expect(await call('bot')).toBe(small);
    expect(handles.stats()).toMatchObject({ inMemory: 0, onDisk: 0 });
  });

  it('cuts a long text at a line end within the cap, keeps isError and _meta, and notes the handle; REST also gets `truncated`', async () => {
    const text = lines(2_000);
    const { call, read } = guarded({ content: [{ type: 'text', text }], isError: true, _meta: { keep: 'me' } });
    const cut = await call('bot');
    const truncation = (cut._meta as Record<string, { handle: string; shownTokens: number; totalTokens: number }>)[TRUNCATED_META_KEY];
    expect(cut.isError).toBe(true);
    expect((cut._meta as { keep: string }).keep).toBe('me');
    const [head, note] = (cut.content as Array<{ text: string }>).map((item) => item.text);
    expect(text.startsWith(head as string) && head?.endsWith('\n')).toBe(true);
    expect(truncation?.shownTokens).toBeLessThanOrEqual(CAP);
    expect(note).toContain(`"handle": "${truncation?.handle}", "offset": ${head?.length}`);
    const page = await read(truncation?.handle as string, 'bot', { offset: head?.length, length: 40 });
    expect((page.content as Array<{ text: string }>)[0]?.text).toBe(text.slice(head?.length, (head?.length ?? 0) + 40));
    const rest = await call('bot', 'rest');
    expect(rest.truncated).toEqual({ handle: expect.stringMatching(/^res_/), totalTokens: truncation?.totalTokens, shownTokens: expect.any(Number) });
    expect((rest.truncated as { shownTokens: number }).shownTokens).toBeLessThanOrEqual(CAP);
    expect((rest.content as Array<{ text: string }>).at(-1)?.text).toContain('GET /results/res_');
  });

  it('answers another agent as for an unknown handle, the operator as the owner, and RESULT_EXPIRED with when after the TTL', async () => {
    const { call, read, clock } = guarded({ content: [{ type: 'text', text: lines(2_000) }] });
    const handle = ((await call('bot'))._meta as Record<string, { handle: string }>)[TRUNCATED_META_KEY]?.handle as string;
    await expect(read(handle, 'other')).rejects.toMatchObject({ code: 'RESULT_NOT_FOUND', message: `No kept result "${handle}"` });
    await expect(read(handle, undefined, { line: 3, lines: 1 })).resolves.toMatchObject({ content: [{ text: 'line 2 of the log\n' }, {}] });
    clock.advance(60_000);
    await expect(read(handle, 'bot')).rejects.toMatchObject({ code: 'RESULT_EXPIRED', message: expect.stringContaining('expired at 2026-12-05T12:01:00.000Z') });
    await expect(read(handle, 'other')).rejects.toMatchObject({ code: 'RESULT_NOT_FOUND' });
  });

  it("follows the caller's own cap: 0 turns the guard off for it", async () => {
    const big = { content: [{ type: 'text', text: lines(2_000) }] };
    const { call } = guarded(big, { agent: 0 });
    expect(await call('uncapped')).toBe(big);
    expect(await call()).not.toBe(big);
  });
});
