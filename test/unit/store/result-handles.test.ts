import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ResultHandles } from '../../../src/store/result-handles.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { tempDir } from '../../helpers/process.js';

const result = (n: number) => ({ content: [{ type: 'text', text: `result ${n} `.repeat(100) }] });
const size = JSON.stringify(result(0)).length;

async function kept(settings: { memory: number; disk: number; spill?: boolean }) {
  const clock = new ManualClock(Date.parse('2026-12-05T12:00:00Z'));
  const dir = settings.spill === false ? undefined : await tempDir();
  const handles = new ResultHandles({ memoryBytes: settings.memory, diskBytes: settings.disk, ttlMs: 60_000, ...(dir ? { dir } : {}) }, clock);
  onTestFinished(() => handles.close());
  return { clock, handles };
}

describe('kept results: memory up to its bound, then 0600 files, evicted oldest first, gone at the TTL', () => {
  it('spills the oldest to 0600 files past the memory bound and evicts the oldest files past the disk bound', async () => {
    const { handles } = await kept({ memory: size * 3, disk: size * 4 });
    const ids = Array.from({ length: 10 }, (_, n) => handles.put('bot', result(n), size));
    expect(handles.stats()).toEqual({ memoryBytes: size * 3, diskBytes: size * 4, inMemory: 3, onDisk: 4 });
    for (const n of [0, 1, 2])
      await expect(handles.get(ids[n] as string, 'bot')).rejects.toMatchObject({ code: 'RESULT_EXPIRED', message: expect.stringContaining('evicted at 2026-12-05T12:00:00.000Z') });
    for (const n of [3, 6, 9]) expect(await handles.get(ids[n] as string, 'bot')).toEqual(result(n));
    await handles.idle();
    const files = await readdir(handles.spillDir as string);
    expect(files.sort()).toEqual([3, 4, 5, 6].map((n) => `${ids[n]}.json`).sort());
    expect(((await stat(join(handles.spillDir as string, files[0] as string))).mode & 0o777).toString(8)).toBe('600');
  });

  it('removes the spill folders of daemons that are gone, and its own when it closes', async () => {
    const parent = await tempDir();
    const gone = spawn(process.execPath, ['-e', '']);
    await once(gone, 'exit');
    const leftover = join(parent, `${gone.pid}-deadbeef`);
    await mkdir(leftover);
    await writeFile(join(leftover, 'res_old.json'), '{}');
    const handles = new ResultHandles({ memoryBytes: 0, dir: parent }, new ManualClock());
    handles.put('bot', result(1), size);
    await handles.idle();
    expect(await readdir(parent)).toEqual([(handles.spillDir as string).slice(parent.length + 1)]);
    await handles.close();
    expect(await readdir(parent)).toEqual([]);
  });

  it('without a folder, evicts past the memory bound instead of spilling', async () => {
    const { handles } = await kept({ memory: size * 2, disk: size * 10, spill: false });
    const ids = [0, 1, 2].map((n) => handles.put('bot', result(n), size));
    await expect(handles.get(ids[0] as string, 'bot')).rejects.toMatchObject({ code: 'RESULT_EXPIRED' });
    expect(handles.stats()).toEqual({ memoryBytes: size * 2, diskBytes: 0, inMemory: 2, onDisk: 0 });
  });

  it("is its owner's and the operator's only; removes each at its TTL on the clock, saying when", async () => {
    const { handles, clock } = await kept({ memory: size * 10, disk: size * 10 });
    const first = handles.put('bot', result(1), size);
    clock.advance(30_000);
    const second = handles.put('bot', result(2), size);
    await expect(handles.get(first, 'eve')).rejects.toMatchObject({ code: 'RESULT_NOT_FOUND' });
    expect(await handles.get(first, undefined)).toEqual(result(1));
    expect([handles.hasFor('bot'), handles.hasFor('eve')]).toEqual([true, false]);
    clock.advance(30_000);
    expect(handles.stats().inMemory).toBe(1);
    await expect(handles.get(first, 'bot')).rejects.toMatchObject({ code: 'RESULT_EXPIRED', message: expect.stringContaining('expired at 2026-12-05T12:01:00.000Z') });
    await expect(handles.get(first, 'eve')).rejects.toMatchObject({ code: 'RESULT_NOT_FOUND' });
    clock.advance(30_000);
    expect([handles.hasFor('bot'), handles.stats().inMemory]).toEqual([false, 0]);
    await expect(handles.get(second, 'bot')).rejects.toMatchObject({ code: 'RESULT_EXPIRED' });
  });
});
