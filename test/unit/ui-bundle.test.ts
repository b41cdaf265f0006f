import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleUi } from '../../scripts/bundle.mjs';

/** The dashboard's build (issue #24): small, self-contained, and without inline script. */

/** The budget for all JS and CSS, gzipped. */
const BUDGET_BYTES = 150 * 1024;

let dir: string;
let inputs: string[];
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'switchboard-ui-'));
  inputs = Object.keys((await bundleUi({ outdir: dir })).inputs);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const read = (name: string): string => readFileSync(join(dir, name), 'utf8');

describe('the dashboard bundle', () => {
  it(`is at most ${BUDGET_BYTES / 1024} KB of JS and CSS gzipped`, () => {
    const gzipped = ['app.js', 'app.css'].map((name) => gzipSync(readFileSync(join(dir, name)), { level: 9 }).length);
    const total = gzipped.reduce((a, b) => a + b, 0);
    expect(total).toBeLessThanOrEqual(BUDGET_BYTES);
    // Far below the budget today (about 42 KB); a jump means a heavy dependency slipped in.
    expect(total).toBeGreaterThan(10 * 1024);
  });

  it('carries no daemon code: the wire types it imports from src/ are type-only and erased', () => {
    expect(inputs.some((path) => path.startsWith('ui/'))).toBe(true);
    expect(inputs.filter((path) => path.startsWith('src/'))).toEqual([]);
  });

  it('built again from the same tree, touches no file: a daemon serving the first build is never left without one', async () => {
    const files = (): Record<string, string> => Object.fromEntries(readdirSync(dir).map((name) => [name, `${statSync(join(dir, name)).ino}:${statSync(join(dir, name)).mtimeMs}`]));
    const before = files();

    await bundleUi({ outdir: dir });

    expect(files()).toEqual(before);
    expect(Object.keys(before).sort()).toEqual(['app.css', 'app.css.map', 'app.js', 'app.js.map', 'index.html']);
  });

  it('loads only its own files: no inline script, nothing from another origin', () => {
    const html = read('index.html');
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBe(1);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/src="\/ui\/app\.js"/);
      expect(body!.trim()).toBe('');
    }
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(read('app.css')).not.toMatch(/url\(\s*['"]?(https?:)?\/\//);
    expect(read('app.js')).not.toMatch(/import\s*\(\s*['"]https?:/);
  });
});
