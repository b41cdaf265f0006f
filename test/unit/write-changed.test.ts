import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeOthers, writeChanged } from '../../scripts/write-changed.mjs';

/**
 * How the builds write their outputs (scripts/write-changed.mjs), so that a second test run in one
 * checkout leaves the first one's daemons and fixtures the files they are loading.
 */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'switchboard-write-changed-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('writeChanged', () => {
  it('leaves a file with the same bytes untouched: same inode, same mtime, not reported', () => {
    const path = join(dir, 'cli.js');
    writeFileSync(path, 'same');
    const before = statSync(path);

    // esbuild's contents are views into a larger buffer: only the view's bytes are the file's.
    const view = Buffer.from('xxhixx').subarray(2, 4);
    expect(
      writeChanged([
        { path, contents: 'same' },
        { path: join(dir, 'new.js'), contents: new Uint8Array(view.buffer, view.byteOffset, view.byteLength) },
      ]),
    ).toEqual([join(dir, 'new.js')]);

    const after = statSync(path);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect(readFileSync(join(dir, 'new.js'), 'utf8')).toBe('hi');
  });

  it('replaces a changed file by a rename: a reader that opened the old one reads all of it, and no temp file is left', () => {
    const path = join(dir, 'chunk.js');
    writeFileSync(path, 'old bytes');
    const reader = openSync(path, 'r');
    try {
      expect(writeChanged([{ path, contents: 'new bytes, longer', mode: 0o755 }])).toEqual([path]);

      const buffer = Buffer.alloc(64);
      const read = readSync(reader, buffer, 0, buffer.length, 0);
      expect(buffer.subarray(0, read).toString()).toBe('old bytes');
    } finally {
      closeSync(reader);
    }
    expect(readFileSync(path, 'utf8')).toBe('new bytes, longer');
    expect(statSync(path).mode & 0o777).toBe(0o755);
    expect(readdirSync(dir)).toEqual(['chunk.js']);
  });
});

describe('removeOthers', () => {
  it("removes an older build's files and keeps the new ones and another build's temp file", () => {
    for (const name of ['serve-NEW.js', 'serve-OLD.js', 'serve-NEW.js.4242-1.tmp']) writeFileSync(join(dir, name), name);

    removeOthers(dir, new Set([join(dir, 'serve-NEW.js')]));

    expect(readdirSync(dir).sort()).toEqual(['serve-NEW.js', 'serve-NEW.js.4242-1.tmp']);
  });

  it("removes a crashed build's temp file once it is ten minutes old", () => {
    const temp = join(dir, 'serve-NEW.js.4242-1.tmp');
    writeFileSync(temp, '');
    const old = new Date(Date.now() - 11 * 60_000);
    utimesSync(temp, old, old);
    writeFileSync(join(dir, 'serve-NEW.js'), '');

    removeOthers(dir, new Set([join(dir, 'serve-NEW.js')]));

    expect(readdirSync(dir)).toEqual(['serve-NEW.js']);
  });

  it('removes nothing when the new build names no file in the folder (its paths spelt otherwise)', () => {
    writeFileSync(join(dir, 'serve-NEW.js'), '');

    removeOthers(dir, new Set(['/elsewhere/serve-NEW.js']));

    expect(readdirSync(dir)).toEqual(['serve-NEW.js']);
  });

  it('does nothing for a folder that is not there', () => {
    expect(() => removeOthers(join(dir, 'missing'), new Set([join(dir, 'missing', 'a.js')]))).not.toThrow();
  });
});
