import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** The documentation a user clones must stand on its own (issue #15, item 6). */

const root = new URL('../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, root), 'utf8');
const DOCS = ['README.md', 'docs/behaviour.md'];

describe('documentation', () => {
  it('points to nothing outside the repository: every relative link resolves, no SPEC.md', () => {
    for (const doc of DOCS) {
      const text = read(doc);
      expect(text, doc).not.toMatch(/SPEC\.md|kept beside/);
      const base = new URL(doc, root);
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue;
        expect(existsSync(new URL(target!, base)), `${doc} → ${target}`).toBe(true);
      }
    }
  });

  it('keeps the quick start to two commands', () => {
    const quickStart = /## Quick start[\s\S]*?```sh\n([\s\S]*?)```/.exec(read('README.md'))?.[1] ?? '';
    expect(quickStart.trim().split('\n').map((line) => line.replace(/\s+#.*$/, ''))).toEqual(['npm ci && npm start', 'npm test']);
  });

  it('describes every event type and every config key a user can set', async () => {
    const behaviour = read('docs/behaviour.md');
    for (const type of ['server.status', 'tools.changed', 'reload.started', 'config.changed', 'server.log']) {
      expect(behaviour).toContain(`\`${type}\``);
    }
    const { ServerConfigSchema } = await import('../../src/config/schema.js');
    const readme = read('README.md');
    for (const key of Object.keys(ServerConfigSchema.shape)) expect(readme, key).toContain(`\`${key}\``);
  });
});
